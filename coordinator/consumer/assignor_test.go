package consumer

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/internal/kafkadiff"
)

// assignorCase is one random assignor input: topics, members with sorted subscriptions and
// sorted previous targets (what the replayed state holds), and the assignor to run.
type assignorCase struct {
	ID          int            `json:"id"`
	Assignor    string         `json:"assignor"`
	Homogeneous bool           `json:"homogeneous"`
	Topics      []caseTopic    `json:"topics"`
	Members     []caseMember   `json:"members"`
	byName      map[string]int // index into Topics
}

type caseTopic struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	Partitions int32  `json:"partitions"`
	uuid       Uuid
}

type caseMember struct {
	ID         string       `json:"id"`
	InstanceID *string      `json:"instanceId"`
	RackID     *string      `json:"rackId"`
	Topics     []string     `json:"topics"`
	Target     []caseTarget `json:"target"`
}

type caseTarget struct {
	TopicID    string  `json:"topicId"`
	Partitions []int32 `json:"partitions"`
}

func randUUID(r *rand.Rand) Uuid {
	var u Uuid
	for i := range u {
		u[i] = byte(r.UintN(256))
	}
	return u
}

// newAssignorCase draws a case: 1-8 topics of 1-48 partitions (sometimes a name no topic
// has), 1-12 members (sometimes up to 60, so that the member map has more than 16 buckets),
// Kafka-style random member ids, some static members, homogeneous or mixed subscriptions, and
// a previous target in which most partitions have an owner (sometimes one that no longer
// subscribes to the topic).
func newAssignorCase(r *rand.Rand, id int) *assignorCase {
	c := &assignorCase{ID: id, Assignor: AssignorUniform, byName: map[string]int{}}
	if r.IntN(3) == 0 {
		c.Assignor = AssignorRange
	}
	nt := 1 + r.IntN(8)
	for i := 0; i < nt; i++ {
		u := randUUID(r)
		t := caseTopic{Name: fmt.Sprintf("t%d", i), ID: base64.RawURLEncoding.EncodeToString(u[:]), Partitions: int32(1 + r.IntN(48)), uuid: u}
		c.byName[t.Name] = len(c.Topics)
		c.Topics = append(c.Topics, t)
	}
	nm := 1 + r.IntN(12)
	if r.IntN(5) == 0 {
		nm = 1 + r.IntN(60)
	}
	homogeneousSubs := r.IntN(2) == 0
	var common []string
	for _, t := range c.Topics {
		if r.IntN(3) > 0 {
			common = append(common, t.Name)
		}
	}
	if len(common) == 0 {
		common = []string{c.Topics[0].Name}
	}
	if r.IntN(10) == 0 {
		common = append(common, "missing")
	}
	for i := 0; i < nm; i++ {
		u := randUUID(r)
		m := caseMember{ID: base64.RawURLEncoding.EncodeToString(u[:])}
		if r.IntN(4) == 0 {
			s := fmt.Sprintf("instance-%d", r.IntN(1000))
			m.InstanceID = &s
		}
		if r.IntN(3) == 0 {
			s := fmt.Sprintf("rack-%d", r.IntN(3))
			m.RackID = &s
		}
		if homogeneousSubs {
			m.Topics = slices.Clone(common)
		} else {
			for _, t := range c.Topics {
				if r.IntN(2) == 0 {
					m.Topics = append(m.Topics, t.Name)
				}
			}
		}
		slices.Sort(m.Topics)
		c.Members = append(c.Members, m)
	}
	// In a random order: the order Kafka's TargetAssignmentBuilder puts the members into its
	// HashMap (its TimelineHashMap's), which decides among ids sharing a bucket.
	r.Shuffle(len(c.Members), func(i, j int) { c.Members[i], c.Members[j] = c.Members[j], c.Members[i] })
	// Kafka's subscription type for name subscriptions: homogeneous iff every subscribed name
	// is subscribed by every member.
	count := map[string]int{}
	for _, m := range c.Members {
		for _, n := range m.Topics {
			count[n]++
		}
	}
	c.Homogeneous = true
	for _, n := range count {
		if n != len(c.Members) {
			c.Homogeneous = false
		}
	}
	// A previous target: each partition owned with probability 3/4 by a random member that
	// subscribes to the topic (1 in 20: any member).
	targets := make([]map[int][]int32, len(c.Members))
	for i := range targets {
		targets[i] = map[int][]int32{}
	}
	for ti, t := range c.Topics {
		var subs []int
		for i, m := range c.Members {
			if slices.Contains(m.Topics, t.Name) {
				subs = append(subs, i)
			}
		}
		for p := int32(0); p < t.Partitions; p++ {
			if r.IntN(4) == 0 {
				continue
			}
			owner := r.IntN(len(c.Members))
			if len(subs) > 0 && r.IntN(20) > 0 {
				owner = subs[r.IntN(len(subs))]
			}
			targets[owner][ti] = append(targets[owner][ti], p)
		}
	}
	for i := range c.Members {
		tis := make([]int, 0, len(targets[i]))
		for ti := range targets[i] {
			tis = append(tis, ti)
		}
		slices.SortFunc(tis, func(a, b int) int { return c.Topics[a].uuid.Compare(c.Topics[b].uuid) })
		for _, ti := range tis {
			c.Members[i].Target = append(c.Members[i].Target, caseTarget{TopicID: c.Topics[ti].ID, Partitions: targets[i][ti]})
		}
	}
	return c
}

func (c *assignorCase) topicByID(s string) Uuid {
	for _, t := range c.Topics {
		if t.ID == s {
			return t.uuid
		}
	}
	panic(s)
}

// run computes the case with coordlog's assignor, rendered as Kafka's side renders it:
// member id -> topic id -> sorted partitions (topics with no partitions omitted).
func (c *assignorCase) run() (map[string]map[string][]int32, error) {
	members := make([]SpecMember, len(c.Members))
	for i, m := range c.Members {
		sm := SpecMember{ID: m.ID, InstanceID: m.InstanceID, RackID: m.RackID, TopicNames: m.Topics}
		for _, t := range m.Target {
			sm.Target = append(sm.Target, TopicPartitions{Topic: c.topicByID(t.TopicID), Partitions: t.Partitions})
		}
		members[i] = sm
	}
	spec := KafkaSpec(members, c.Homogeneous, func(name string) (Uuid, int32, bool) {
		i, ok := c.byName[name]
		if !ok {
			return Uuid{}, 0, false
		}
		return c.Topics[i].uuid, c.Topics[i].Partitions, true
	})
	out, err := Assign(c.Assignor, spec)
	if err != nil {
		return nil, err
	}
	res := map[string]map[string][]int32{}
	for i, a := range out {
		topics := map[string][]int32{}
		for _, tp := range a {
			if len(tp.Partitions) > 0 {
				ps := slices.Clone(tp.Partitions)
				slices.Sort(ps)
				topics[base64.RawURLEncoding.EncodeToString(tp.Topic[:])] = ps
			}
		}
		res[spec.Members[i].ID] = topics
	}
	for _, m := range c.Members {
		if res[m.ID] == nil {
			res[m.ID] = map[string][]int32{}
		}
	}
	return res, nil
}

// TestAssignorInvariants: on random inputs, every partition of a subscribed existing topic
// is assigned to exactly one of its subscribers and nothing else is assigned; uniform is
// balanced (homogeneous: sizes differ by at most one) and sticky (a member keeps
// min(previous, floor quota) of its subscribed previous partitions); range gives each
// subscriber a contiguous range of P/N or P/N+1 partitions.
func TestAssignorInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 2000; i++ {
		c := newAssignorCase(r, i)
		res, err := c.run()
		require.NoError(t, err, "case %d", i)
		owner := map[string]string{}
		sizes := map[string]int{}
		for _, m := range c.Members {
			for tid, ps := range res[m.ID] {
				name := ""
				for _, tp := range c.Topics {
					if tp.ID == tid {
						name = tp.Name
					}
				}
				require.Contains(t, m.Topics, name, "case %d: %s got %s it does not subscribe to", i, m.ID, name)
				for _, p := range ps {
					k := fmt.Sprintf("%s-%d", name, p)
					_, dup := owner[k]
					require.False(t, dup, "case %d: %s assigned twice", i, k)
					owner[k] = m.ID
				}
				sizes[m.ID] += len(ps)
				if c.Assignor == AssignorRange {
					require.Equal(t, int(ps[len(ps)-1]-ps[0])+1, len(ps), "case %d: range not contiguous", i)
				}
			}
		}
		total := 0
		for _, tp := range c.Topics {
			subscribed := false
			for _, m := range c.Members {
				subscribed = subscribed || slices.Contains(m.Topics, tp.Name)
			}
			for p := int32(0); p < tp.Partitions; p++ {
				_, ok := owner[fmt.Sprintf("%s-%d", tp.Name, p)]
				require.Equal(t, subscribed, ok, "case %d: %s-%d", i, tp.Name, p)
			}
			if subscribed {
				total += int(tp.Partitions)
			}
		}
		if c.Assignor == AssignorUniform && c.Homogeneous {
			lo, hi := total/len(c.Members), (total+len(c.Members)-1)/len(c.Members)
			for _, m := range c.Members {
				require.True(t, sizes[m.ID] >= lo && sizes[m.ID] <= hi, "case %d: %s has %d, want %d..%d", i, m.ID, sizes[m.ID], lo, hi)
				kept := 0
				for _, tg := range m.Target {
					for _, p := range tg.Partitions {
						for _, q := range res[m.ID][tg.TopicID] {
							if p == q {
								kept++
							}
						}
					}
				}
				prev := 0
				for _, tg := range m.Target {
					for _, tp := range c.Topics {
						if tp.ID == tg.TopicID && slices.Contains(m.Topics, tp.Name) {
							prev += len(tg.Partitions)
						}
					}
				}
				require.GreaterOrEqual(t, kept, min(prev, lo), "case %d: %s kept %d of %d", i, m.ID, kept, prev)
			}
		}
	}
}

// TestAssignorsEqualKafka is the differential test against Kafka 4.4's own UniformAssignor
// and RangeAssignor: diff/AssignorDiff.java in fixtures/kafka (compiled here with javac)
// runs them on the same random cases, with inputs built the way Kafka's coordinator builds
// them, and every assignment must be identical. COORDLOG_KAFKA_LIB names the directory of
// Kafka's jars (fixtures/kafka/target/lib, which `mvn -f fixtures/kafka/pom.xml package`
// fills; fixtures/kafka/assignor-diff.sh does both and runs this test, as CI does).
// COORDLOG_ASSIGNOR_CASES sets the number of cases (default 1000).
func TestAssignorsEqualKafka(t *testing.T) {
	lib := kafkadiff.Lib(t, "Kafka's assignors")
	n := kafkadiff.Cases(t, 1000)

	r := rand.New(rand.NewPCG(2026, 848))
	cases := make([]*assignorCase, n)
	var in bytes.Buffer
	for i := range cases {
		cases[i] = newAssignorCase(r, i)
		b, err := json.Marshal(cases[i])
		require.NoError(t, err)
		in.Write(b)
		in.WriteByte('\n')
	}
	lines := kafkadiff.Run(t, lib, "AssignorDiff", in.Bytes())
	seen, homo, hetero, ranges := 0, 0, 0, 0
	for _, line := range lines {
		var got struct {
			ID      int                           `json:"id"`
			Members map[string]map[string][]int32 `json:"members"`
			Error   string                        `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		c := cases[got.ID]
		require.Empty(t, got.Error, "case %d: Kafka failed", got.ID)
		mine, err := c.run()
		require.NoError(t, err, "case %d", got.ID)
		if !equalAssignments(mine, got.Members) {
			b, _ := json.Marshal(c)
			t.Fatalf("case %d (%s, homogeneous=%v): coordlog and Kafka differ\ninput: %s\ncoordlog: %v\nkafka:    %v", got.ID, c.Assignor, c.Homogeneous, b, mine, got.Members)
		}
		seen++
		switch {
		case c.Assignor == AssignorRange:
			ranges++
		case c.Homogeneous:
			homo++
		default:
			hetero++
		}
	}
	require.Equal(t, n, seen)
	t.Logf("%d cases identical to Kafka 4.4: %d uniform homogeneous, %d uniform heterogeneous, %d range", seen, homo, hetero, ranges)
}

func equalAssignments(a, b map[string]map[string][]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for m, ta := range a {
		tb := b[m]
		if len(ta) != len(tb) {
			return false
		}
		for topic, ps := range ta {
			if !slices.Equal(ps, tb[topic]) {
				return false
			}
		}
	}
	return true
}

// bigCase is the input of BenchmarkUniformAssign and of Kafka's side of
// fixtures/kafka/assignor-bench.sh: 1,000 members with Kafka-style ids subscribed to 10
// topics of 1,000 partitions (10,000 partitions); with previous, the targets of a balanced
// assignment over the first 999 members (one member has just joined).
func bigCase(previous bool) *assignorCase {
	c := &assignorCase{Assignor: AssignorUniform, Homogeneous: true, byName: map[string]int{}}
	var names []string
	for t := 0; t < 10; t++ {
		var id Uuid
		binary.BigEndian.PutUint64(id[:8], uint64(t+1)*0x9E3779B97F4A7C15)
		binary.BigEndian.PutUint64(id[8:], uint64(t+7)*0xC2B2AE3D27D4EB4F)
		tp := caseTopic{Name: fmt.Sprintf("topic-%d", t), ID: base64.RawURLEncoding.EncodeToString(id[:]), Partitions: 1000, uuid: id}
		c.byName[tp.Name] = t
		c.Topics = append(c.Topics, tp)
		names = append(names, tp.Name)
	}
	for m := 0; m < 1000; m++ {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], uint64(m+1)*0xD6E8FEB86659FD93)
		binary.BigEndian.PutUint64(b[8:], uint64(m+3)*0x9E3779B97F4A7C15)
		c.Members = append(c.Members, caseMember{ID: base64.RawURLEncoding.EncodeToString(b[:]), Topics: names})
	}
	if previous {
		for ti, tp := range c.Topics {
			for p := 0; p < 1000; p++ {
				m := &c.Members[(ti*1000+p)%999]
				if n := len(m.Target); n == 0 || m.Target[n-1].TopicID != tp.ID {
					m.Target = append(m.Target, caseTarget{TopicID: tp.ID})
				}
				m.Target[len(m.Target)-1].Partitions = append(m.Target[len(m.Target)-1].Partitions, int32(p))
			}
		}
		for i := range c.Members {
			m := &c.Members[i]
			slices.SortFunc(m.Target, func(a, b caseTarget) int { return c.topicByID(a.TopicID).Compare(c.topicByID(b.TopicID)) })
		}
	}
	return c
}

func (c *assignorCase) spec() *AssignmentSpec {
	members := make([]SpecMember, len(c.Members))
	for i, m := range c.Members {
		sm := SpecMember{ID: m.ID, InstanceID: m.InstanceID, RackID: m.RackID, TopicNames: m.Topics}
		for _, t := range m.Target {
			sm.Target = append(sm.Target, TopicPartitions{Topic: c.topicByID(t.TopicID), Partitions: t.Partitions})
		}
		members[i] = sm
	}
	return KafkaSpec(members, c.Homogeneous, func(name string) (Uuid, int32, bool) {
		i, ok := c.byName[name]
		if !ok {
			return Uuid{}, 0, false
		}
		return c.Topics[i].uuid, c.Topics[i].Partitions, true
	})
}

// BenchmarkUniformAssign is a full uniform assignment of 10,000 partitions over 1,000
// members, from scratch and after one member joined a balanced group (the assignor alone,
// as Kafka's side times UniformAssignor.assign alone).
func BenchmarkUniformAssign(b *testing.B) {
	for _, prev := range []bool{false, true} {
		name := "fresh"
		if prev {
			name = "one-joins"
		}
		spec := bigCase(prev).spec()
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Assign(AssignorUniform, spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWriteBenchCases writes the inputs of BenchmarkUniformAssign, one JSON case per line
// (the AssignorDiff format), to COORDLOG_BENCH_CASES: fixtures/kafka/assignor-bench.sh gives
// them to Kafka's UniformAssignor and checks that its assignments equal coordlog's.
func TestWriteBenchCases(t *testing.T) {
	path := os.Getenv("COORDLOG_BENCH_CASES")
	if path == "" {
		t.Skip("COORDLOG_BENCH_CASES is not set (fixtures/kafka/assignor-bench.sh sets it)")
	}
	var out bytes.Buffer
	for i, prev := range []bool{false, true} {
		c := bigCase(prev)
		c.ID = i
		b, err := json.Marshal(c)
		require.NoError(t, err)
		out.Write(b)
		out.WriteByte('\n')
		res, err := c.run()
		require.NoError(t, err)
		rb, err := json.Marshal(map[string]any{"id": i, "members": res})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(fmt.Sprintf("%s.coordlog.%d", path, i), rb, 0o644))
	}
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
}
