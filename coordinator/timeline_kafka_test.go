package coordinator

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/kafkadiff"
)

// TestTimelineOrderEqualsKafka is the differential test of the orders of Kafka's
// TimelineHashMaps of members and regexes against Kafka 4.4's own ConsumerGroup, ShareGroup and
// StreamsGroup (fixtures/kafka/diff/TimelineDiff.java, compiled here with javac): random
// histories of joins, updates and leaves (and of regex resolutions) are replayed as records
// through groupstate, and the calls Kafka's replay makes for the same records are made on
// Kafka's classes; the order KafkaTimelineOrder gives from groupstate's MemberTable and
// RegexTable must be the order Kafka's maps iterate, for every case. The ids mix member ids
// as clients make them (22 characters of base64), short ids, and ids built from "Aa" and
// "BB", whose String.hashCode collide, so that slots hold several keys and the table grows
// past 64 slots. COORDLOG_KAFKA_LIB names the directory of Kafka's jars
// (fixtures/kafka/target/lib; fixtures/kafka/assignor-diff.sh fills it and runs this test, as
// CI does); COORDLOG_ASSIGNOR_CASES sets the number of cases (default 1000).
func TestTimelineOrderEqualsKafka(t *testing.T) {
	lib := kafkadiff.Lib(t, "Kafka's TimelineHashMap")
	n := kafkadiff.Cases(t, 1000)

	r := rand.New(rand.NewPCG(2026, 14))
	cases := make([]*timelineCase, n)
	var in bytes.Buffer
	for i := range cases {
		cases[i] = newTimelineCase(t, r)
		in.WriteString(strings.Join(cases[i].ops, "\t"))
		in.WriteByte('\n')
	}
	lines := kafkadiff.Run(t, lib, "TimelineDiff", in.Bytes())
	seen, differ, maxSlots, shared := 0, 0, 0, 0
	for _, want := range lines {
		c := cases[seen]
		seen++
		got := c.orders()
		if got != want {
			differ++
			if differ <= 3 {
				t.Errorf("case %d: coordlog and Kafka differ\nops:      %s\ncoordlog: %s\nkafka:    %s", seen-1, strings.Join(c.ops, " "), got, want)
			}
		}
		mt, _ := c.st.View().MemberTable("g")
		maxSlots = max(maxSlots, mt.Slots)
		if sharesSlot(mt.Inserted, mt.Slots) {
			shared++
		}
	}
	require.Equal(t, n, seen)
	require.Zero(t, differ, "%d of %d cases differ from Kafka's TimelineHashMap", differ, seen)
	t.Logf("%d cases identical to Kafka 4.4's ConsumerGroup, ShareGroup and StreamsGroup maps: %d with consumer members sharing a slot, tables up to %d slots", seen, shared, maxSlots)
}

// timelineCase is one random history: the records replayed into st, and the calls Kafka's
// replay makes for them (TimelineDiff.java's operations).
type timelineCase struct {
	st  *groupstate.State
	ops []string
}

func newTimelineCase(t *testing.T, r *rand.Rand) *timelineCase {
	c := &timelineCase{st: groupstate.New(groupstate.Kafka44)}
	var pool []string
	for range 1 + r.IntN(200) {
		switch r.IntN(3) {
		case 0:
			var id [16]byte
			for i := range id {
				id[i] = byte(r.Uint32())
			}
			pool = append(pool, base64.RawURLEncoding.EncodeToString(id[:]))
		case 1:
			pool = append(pool, fmt.Sprintf("m%d", r.IntN(1000)))
		default:
			var b strings.Builder
			for range 1 + r.IntN(4) {
				b.WriteString([]string{"Aa", "BB"}[r.IntN(2)])
			}
			pool = append(pool, b.String())
		}
	}
	consumer, share, streams, regexes := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	// A consumer member's server assignor (none: ""), which record 5 sets and the other
	// puts keep: a few names, so that they share slots and counts.
	assignor := map[string]string{}
	put := func(id string) string {
		if a := assignor[id]; a != "" {
			return "c+" + id + "=" + a
		}
		return "c+" + id
	}
	do := func(err error) { require.NoError(t, err) }
	for range r.IntN(600) {
		id := pool[r.IntN(len(pool))]
		switch k := r.IntN(10); {
		case k < 4: // a consumer member joins (records 5 and 8) or heartbeats (8)
			if !consumer[id] || r.IntN(4) == 0 { // a join, or a new subscription (record 5)
				md := groupstate.ConsumerMemberMetadataValue{ClientID: "c"}
				assignor[id] = []string{"", "range", "uniform", "Aa", "BB", "sticky"}[r.IntN(6)]
				if a := assignor[id]; a != "" {
					md.ServerAssignor = &a
				}
				do(c.st.ReplayConsumerGroupMemberMetadata("g", id, md))
				c.ops = append(c.ops, put(id))
				consumer[id] = true
			}
			do(c.st.ReplayConsumerGroupCurrentMemberAssignment("g", id, groupstate.ConsumerCurrentAssignmentValue{MemberEpoch: 1}))
			c.ops = append(c.ops, put(id))
		case k < 6: // it leaves: 8 tombstone (a put), 5 tombstone (a removal)
			do(c.st.ReplayConsumerGroupCurrentMemberAssignmentTombstone("g", id))
			if consumer[id] {
				do(c.st.ReplayConsumerGroupMemberMetadataTombstone("g", id))
				c.ops = append(c.ops, put(id), "c-"+id)
				delete(consumer, id)
				delete(assignor, id)
			}
		case k < 7: // a regex resolved, or its tombstone
			re := id[:1] + ".*"
			if r.IntN(3) > 0 {
				do(c.st.ReplayConsumerGroupRegularExpression("g", re, groupstate.RegularExpressionValue{Version: 1}))
				c.ops = append(c.ops, "r+"+re)
				regexes[re] = true
			} else {
				do(c.st.ReplayConsumerGroupRegularExpressionTombstone("g", re))
				c.ops = append(c.ops, "r-"+re)
				delete(regexes, re)
			}
		case k < 8: // a share member's record 10 or 14, or it leaves (14 and 10 tombstones)
			if share[id] && r.IntN(3) == 0 {
				do(c.st.ReplayShareGroupCurrentMemberAssignmentTombstone("s", id))
				do(c.st.ReplayShareGroupMemberMetadataTombstone("s", id))
				c.ops = append(c.ops, "s+"+id, "s-"+id)
				delete(share, id)
			} else {
				do(c.st.ReplayShareGroupMemberMetadata("s", id, groupstate.ShareMemberMetadataValue{ClientID: "c"}))
				c.ops = append(c.ops, "s+"+id)
				share[id] = true
			}
		default: // a streams member's record 19 or 22, or it leaves (22 and 19 tombstones)
			if streams[id] && r.IntN(3) == 0 {
				do(c.st.ReplayStreamsGroupCurrentMemberAssignmentTombstone("t", id))
				do(c.st.ReplayStreamsGroupMemberMetadataTombstone("t", id))
				c.ops = append(c.ops, "t+"+id, "t-"+id)
				delete(streams, id)
			} else {
				do(c.st.ReplayStreamsGroupCurrentMemberAssignment("t", id, groupstate.StreamsCurrentAssignmentValue{MemberEpoch: 1}))
				c.ops = append(c.ops, "t+"+id)
				streams[id] = true
			}
		}
	}
	return c
}

// orders renders the orders KafkaTimelineOrder gives from the state's tables, as
// TimelineDiff.java prints Kafka's.
func (c *timelineCase) orders() string {
	v := c.st.View()
	var lists []string
	member := func(id string) {
		mt, _ := v.MemberTable(id)
		lists = append(lists, strings.Join(KafkaTimelineOrder(mt.Inserted, JavaStringHash, mt.Slots), ","))
	}
	member("g")
	rt, _ := v.RegexTable("g")
	lists = append(lists, strings.Join(KafkaTimelineOrder(rt.Inserted, JavaStringHash, rt.Slots), ","))
	member("s")
	member("t")
	at, _ := v.AssignorTable("g")
	lists = append(lists, strings.Join(KafkaTimelineOrder(at.Inserted, JavaStringHash, at.Slots), ","))
	return strings.Join(lists, "\t")
}

// sharesSlot reports whether two of keys fall in one slot of a table of slots slots.
func sharesSlot(keys []string, slots int) bool {
	seen := map[uint64]bool{}
	for _, k := range keys {
		s := kafkaSlot(JavaStringHash(k), slots)
		if seen[s] {
			return true
		}
		seen[s] = true
	}
	return false
}
