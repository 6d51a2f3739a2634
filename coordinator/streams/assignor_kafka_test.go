package streams

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/internal/kafkadiff"
)

// assignorCase is one random input of the differential test against Kafka's
// StickyTaskAssignor, in the JSON of fixtures/kafka/diff/StreamsAssignorDiff.java.
type assignorCase struct {
	ID            int          `json:"id"`
	Standbys      int          `json:"standbys"`
	Subtopologies []caseSub    `json:"subtopologies"`
	Members       []caseMember `json:"members"` // in the order Kafka puts them into its HashMap
}

type caseSub struct {
	ID       string `json:"id"`
	Tasks    int32  `json:"tasks"`
	Stateful bool   `json:"stateful"`
}

type caseMember struct {
	ID         string                      `json:"id"`
	ProcessID  string                      `json:"processId"`
	RackID     *string                     `json:"rackId"`
	InstanceID *string                     `json:"instanceId"`
	Active     map[string][]int32          `json:"active"`
	Standby    map[string][]int32          `json:"standby"`
	Warmup     map[string][]int32          `json:"warmup"`
	Offsets    map[string]map[string]int64 `json:"offsets"`
	EndOffsets map[string]map[string]int64 `json:"endOffsets"`
}

// caseResult is one member's assignment: subtopology id to sorted partitions.
type caseResult struct {
	Active  map[string][]int32 `json:"active"`
	Standby map[string][]int32 `json:"standby"`
}

// newAssignorCase draws a group: 1-12 subtopologies (ids "0".."11", so that "10" sorts before
// "2") of 1-16 tasks, some stateful; 1-15 members with Kafka-style member ids (base64 UUIDs)
// on 1..members processes (UUID strings), some with racks and instance ids; 0-2 standby
// replicas; and a history: none, a previous assignment of some of the tasks (actives on at
// most one member, standbys on others), warm-ups, tasks the topology no longer has (a
// subtopology gone, fewer partitions), and reported task offsets.
func newAssignorCase(r *rand.Rand, id int) *assignorCase {
	c := &assignorCase{ID: id, Standbys: []int{0, 1, 1, 2}[r.IntN(4)]}
	nSubs := 1 + r.IntN(4)
	if r.IntN(8) == 0 {
		nSubs = 1 + r.IntN(12)
	}
	for i := range nSubs {
		c.Subtopologies = append(c.Subtopologies, caseSub{ID: strconv.Itoa(i), Tasks: 1 + r.Int32N(16), Stateful: r.IntN(2) == 0})
	}
	nMembers := 1 + r.IntN(15)
	procs := make([]string, 1+r.IntN(nMembers))
	for i := range procs {
		procs[i] = processUUID(r)
	}
	racks := []string{"rack-a", "rack-b", "rack-c"}
	for i := range nMembers {
		m := caseMember{ID: memberUUID(r), ProcessID: procs[r.IntN(len(procs))]}
		if i < len(procs) {
			m.ProcessID = procs[i] // every process has a member
		}
		if r.IntN(2) == 0 {
			rack := racks[r.IntN(len(racks))]
			m.RackID = &rack
		}
		if r.IntN(4) == 0 {
			inst := fmt.Sprintf("instance-%d", i)
			m.InstanceID = &inst
		}
		c.Members = append(c.Members, m)
	}
	// In a random order: the order Kafka's TargetAssignmentBuilder puts the members into its
	// HashMap (its TimelineHashMap's), which decides among ids sharing a bucket.
	r.Shuffle(len(c.Members), func(i, j int) { c.Members[i], c.Members[j] = c.Members[j], c.Members[i] })

	history := r.IntN(4) // 0: none, 1-3: more and more of it
	if history == 0 {
		return c
	}
	// Tasks of the history: the topology's, plus some it no longer has.
	type task struct {
		sub      string
		p        int32
		stateful bool
	}
	var tasks []task
	for _, s := range c.Subtopologies {
		n := s.Tasks
		if r.IntN(5) == 0 {
			n += 1 + r.Int32N(3) // partitions since removed
		}
		for p := range n {
			tasks = append(tasks, task{s.ID, p, s.Stateful})
		}
	}
	if r.IntN(5) == 0 {
		for p := range 1 + r.Int32N(4) {
			tasks = append(tasks, task{"gone", p, true})
		}
	}
	add := func(m map[string][]int32, t task) map[string][]int32 {
		if m == nil {
			m = map[string][]int32{}
		}
		m[t.sub] = append(m[t.sub], t.p)
		return m
	}
	holds := func(m *caseMember, t task) bool {
		for _, tm := range []map[string][]int32{m.Active, m.Standby, m.Warmup} {
			if slices.Contains(tm[t.sub], t.p) {
				return true
			}
		}
		return false
	}
	for _, t := range tasks {
		if r.IntN(4) < history { // an active owner
			m := &c.Members[r.IntN(nMembers)]
			m.Active = add(m.Active, t)
		}
		if t.stateful {
			for range r.IntN(c.Standbys + 2) {
				if m := &c.Members[r.IntN(nMembers)]; !holds(m, t) {
					m.Standby = add(m.Standby, t)
				}
			}
			if r.IntN(6) == 0 {
				if m := &c.Members[r.IntN(nMembers)]; !holds(m, t) {
					m.Warmup = add(m.Warmup, t)
				}
			}
		}
		if t.stateful && r.IntN(3) == 0 { // offsets reported by a member with local state
			m := &c.Members[r.IntN(nMembers)]
			if m.Offsets == nil {
				m.Offsets, m.EndOffsets = map[string]map[string]int64{}, map[string]map[string]int64{}
			}
			if m.Offsets[t.sub] == nil {
				m.Offsets[t.sub], m.EndOffsets[t.sub] = map[string]int64{}, map[string]int64{}
			}
			off := int64(r.IntN(5)) * 100 // ties are frequent, as with caught-up replicas
			m.Offsets[t.sub][strconv.Itoa(int(t.p))] = off
			m.EndOffsets[t.sub][strconv.Itoa(int(t.p))] = off + int64(r.IntN(200))
		}
	}
	return c
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func memberUUID(r *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func processUUID(r *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// run is coordlog's assignment of the case, as the coordinator calls the assignor: members
// sorted by id with their current active and standby tasks (warm-ups are not an input) and
// reported offsets, subtopologies sorted by id.
func (c *assignorCase) run() (map[string]caseResult, error) {
	subs := make([]configuredSubtopology, len(c.Subtopologies))
	for i, s := range c.Subtopologies {
		subs[i] = configuredSubtopology{id: s.ID, numTasks: s.Tasks, stateful: s.Stateful}
	}
	slices.SortFunc(subs, func(a, b configuredSubtopology) int { return cmpString(a.id, b.id) })
	members := make([]assignMember, len(c.Members))
	for i, m := range c.Members {
		in := assignMember{id: m.ID, processID: m.ProcessID, active: taskMap{}, standby: taskMap{}}
		for sub, ps := range m.Active {
			for _, p := range ps {
				in.active[TaskID{sub, p}] = 1
			}
		}
		for sub, ps := range m.Standby {
			for _, p := range ps {
				in.standby[TaskID{sub, p}] = 0
			}
		}
		if len(m.Offsets) > 0 {
			in.offsets = map[TaskID]int64{}
			for sub, ps := range m.Offsets {
				for p, off := range ps {
					n, err := strconv.Atoi(p)
					if err != nil {
						return nil, err
					}
					in.offsets[TaskID{sub, int32(n)}] = off
				}
			}
		}
		members[i] = in
	}
	out, err := stickyAssign(members, subs, c.Standbys)
	if err != nil {
		return nil, err
	}
	res := map[string]caseResult{}
	for id, tt := range out {
		res[id] = caseResult{Active: byTopology(tt.active), Standby: byTopology(tt.standby)}
	}
	return res, nil
}

func byTopology(m taskMap) map[string][]int32 {
	out := map[string][]int32{}
	for t := range m {
		out[t.Subtopology] = append(out[t.Subtopology], t.Partition)
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}

// TestAssignorEqualsKafka is the differential test against Kafka 4.4's own
// StickyTaskAssignor: fixtures/kafka/diff/StreamsAssignorDiff.java (compiled here with javac)
// runs it on the same random groups, built the way Kafka's streams TargetAssignmentBuilder
// builds its input, and every member's active and standby tasks must be identical.
// COORDLOG_KAFKA_LIB names the directory of Kafka's jars (fixtures/kafka/target/lib;
// fixtures/kafka/assignor-diff.sh fills it and runs this test, as CI does);
// COORDLOG_ASSIGNOR_CASES sets the number of cases (default 1000).
func TestAssignorEqualsKafka(t *testing.T) {
	lib := kafkadiff.Lib(t, "Kafka's StickyTaskAssignor")
	n := kafkadiff.Cases(t, 1000)

	r := rand.New(rand.NewPCG(2026, 1071))
	cases := make([]*assignorCase, n)
	var in bytes.Buffer
	for i := range cases {
		cases[i] = newAssignorCase(r, i)
		b, err := json.Marshal(cases[i])
		require.NoError(t, err)
		in.Write(b)
		in.WriteByte('\n')
	}
	lines := kafkadiff.Run(t, lib, "StreamsAssignorDiff", in.Bytes())
	seen, differ := 0, 0
	var stats struct{ standbys, history, stale, offsets, sharedProcess int }
	for _, line := range lines {
		var got struct {
			ID      int                   `json:"id"`
			Members map[string]caseResult `json:"members"`
			Error   string                `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		c := cases[got.ID]
		require.Empty(t, got.Error, "case %d: Kafka failed", got.ID)
		mine, err := c.run()
		require.NoError(t, err, "case %d", got.ID)
		if !equalResults(mine, got.Members) {
			differ++
			if differ <= 3 {
				b, _ := json.Marshal(c)
				t.Errorf("case %d: coordlog and Kafka differ\ninput: %s\ncoordlog: %v\nkafka:    %v", got.ID, b, mine, got.Members)
			}
		}
		seen++
		c.count(&stats.standbys, &stats.history, &stats.stale, &stats.offsets, &stats.sharedProcess)
	}
	require.Equal(t, n, seen)
	require.Zero(t, differ, "%d of %d cases differ from Kafka's StickyTaskAssignor", differ, seen)
	t.Logf("%d cases identical to Kafka 4.4's StickyTaskAssignor: %d with standby replicas, %d with a previous assignment, %d with tasks the topology no longer has, %d with reported offsets, %d with processes of several members",
		seen, stats.standbys, stats.history, stats.stale, stats.offsets, stats.sharedProcess)
}

// count adds what the case covers to the counters.
func (c *assignorCase) count(standbys, history, stale, offsets, shared *int) {
	if c.Standbys > 0 {
		*standbys++
	}
	procs := map[string]int{}
	hasHistory, hasStale, hasOffsets := false, false, false
	tasks := map[string]int32{}
	for _, s := range c.Subtopologies {
		tasks[s.ID] = s.Tasks
	}
	for _, m := range c.Members {
		procs[m.ProcessID]++
		for _, tm := range []map[string][]int32{m.Active, m.Standby, m.Warmup} {
			for sub, ps := range tm {
				hasHistory = true
				for _, p := range ps {
					if n, ok := tasks[sub]; !ok || p >= n {
						hasStale = true
					}
				}
			}
		}
		hasOffsets = hasOffsets || len(m.Offsets) > 0
	}
	if hasHistory {
		*history++
	}
	if hasStale {
		*stale++
	}
	if hasOffsets {
		*offsets++
	}
	if len(procs) < len(c.Members) {
		*shared++
	}
}

func equalResults(a, b map[string]caseResult) bool {
	if len(a) != len(b) {
		return false
	}
	eq := func(x, y map[string][]int32) bool {
		return maps.EqualFunc(nonEmpty(x), nonEmpty(y), slices.Equal[[]int32])
	}
	for id, ra := range a {
		rb, ok := b[id]
		if !ok || !eq(ra.Active, rb.Active) || !eq(ra.Standby, rb.Standby) {
			return false
		}
	}
	return true
}

func nonEmpty(m map[string][]int32) map[string][]int32 {
	out := map[string][]int32{}
	for k, v := range m {
		if len(v) > 0 {
			out[k] = v
		}
	}
	return out
}
