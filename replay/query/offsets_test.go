package query_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/query"
)

// stateOf replays a recording of fixtures/real to its end.
func stateOf(t *testing.T, name string) groupstate.View {
	t.Helper()
	in := open(t, "../../fixtures/real/"+name+"/__consumer_offsets-0")
	e := replay.New(0, replay.Options{})
	require.NoError(t, e.Run(context.Background(), in, 1<<62))
	return e.State()
}

func labels(offs []groupstate.CommittedOffset) []string {
	var out []string
	for _, o := range offs {
		out = append(out, fmt.Sprintf("%s %s:%d=%d", o.GroupID, o.Topic, o.Partition, o.CommittedOffset))
	}
	return out
}

// TestOffsetSelection: the transactions recording (Kafka 4.4) ends with six committed offsets
// of three groups and an open transaction holding offsets of two groups.
func TestOffsetSelection(t *testing.T) {
	st := stateOf(t, "transactions")
	all := query.OffsetSelection{}
	require.Equal(t, []string{"txn-classic", "txn-consumer", "txn-simple"}, all.Groups(st))
	require.Equal(t, 6, all.Count(st))
	require.Equal(t, labels(st.AllOffsets()), labels(slices.Collect(all.All(st))), "every offset, group by group")

	tps, err := query.ParseTopicPartitions([]string{"s6-in:1", "nosuch:3"})
	require.NoError(t, err)
	one := query.OffsetSelection{Group: "txn-simple", Filter: query.OffsetFilter{TopicPartitions: tps, Topics: map[string]bool{"gone": true}}}
	require.Equal(t, []string{"txn-simple"}, one.Groups(st))
	require.Equal(t, []string{"txn-simple s6-in:1=6"}, labels(one.Offsets(st, "txn-simple")))
	require.Equal(t, []string{"gone", "nosuch:3"}, one.Missing([]groupstate.View{st}), "what the filter names and no offset has")
	require.Nil(t, all.Missing([]groupstate.View{st}), "no filter, nothing missing")

	pending := one.Pending(st)
	require.Len(t, pending, 1)
	require.Equal(t, int64(5), pending[0].ProducerID)
	require.Equal(t, []string{"txn-simple s6-in:1=14"}, labels(pending[0].Offsets), "the group's pending offset the filter keeps")
	require.Empty(t, query.OffsetSelection{Group: "txn-classic"}.Pending(st), "no open transaction holds the group's offsets")
	require.Equal(t, []string{"s6-in"}, all.Topics([]groupstate.View{st, st}))

	rs := query.OffsetSelection{}.ForReset([]groupstate.View{st})
	require.Len(t, rs.Offsets, 6)
	require.True(t, slices.IsSortedFunc(rs.Offsets, func(a, b groupstate.CommittedOffset) int {
		return cmpOffsets(a, b)
	}))
	require.Equal(t, 2, rs.Pending, "both pending offsets, whatever the filter")
	require.Equal(t, groupstate.GroupTypeClassic, rs.Types["txn-simple"], "a simple group's offsets")

	offs, typ := query.OffsetSelection{Group: "txn-consumer"}.GroupOffsets([]groupstate.View{st})
	require.Len(t, offs, 2)
	require.Equal(t, groupstate.GroupTypeConsumer, typ)
}

func cmpOffsets(a, b groupstate.CommittedOffset) int {
	if a.GroupID != b.GroupID {
		return map[bool]int{true: -1, false: 1}[a.GroupID < b.GroupID]
	}
	if a.Topic != b.Topic {
		return map[bool]int{true: -1, false: 1}[a.Topic < b.Topic]
	}
	return int(a.Partition - b.Partition)
}

// ends are log end offsets for a test: a topic missing, a partition missing.
type ends map[string]int64

func (e ends) LogEnd(topic string, p int32) (int64, string) {
	if topic == "gone" {
		return 0, "topic not on the cluster"
	}
	end, ok := e[fmt.Sprintf("%s:%d", topic, p)]
	if !ok {
		return 0, "partition not on the cluster"
	}
	return end, ""
}

func TestLag(t *testing.T) {
	off := func(topic string, p int32, o int64) groupstate.CommittedOffset {
		return groupstate.CommittedOffset{GroupID: "g", Topic: topic, Partition: p, OffsetAndMetadata: groupstate.OffsetAndMetadata{CommittedOffset: o}}
	}
	rows := query.Lag([]groupstate.CommittedOffset{off("t", 0, 5), off("t", 1, 12), off("t", 9, 1), off("gone", 0, 1)}, ends{"t:0": 10, "t:1": 10})
	require.Equal(t, int64(10), *rows[0].LogEnd)
	require.Equal(t, int64(5), *rows[0].Lag)
	require.Equal(t, int64(0), *rows[1].Lag, "a committed offset past the end (a truncated log) lags 0, as Kafka prints it")
	require.Nil(t, rows[2].Lag)
	require.Equal(t, "partition not on the cluster", rows[2].Missing)
	require.Equal(t, "topic not on the cluster", rows[3].Missing)
}

// TestDescribe: the groups describe shows, one group or those of a type, and what it shows
// beside them.
func TestDescribe(t *testing.T) {
	st := stateOf(t, "transactions")
	ids := func(d query.Description) []string {
		var out []string
		for g := range d.Partitions[0].Groups() {
			out = append(out, g.GroupID)
		}
		return out
	}
	all := query.Describe([]groupstate.View{st}, query.DescribeFilter{})
	require.Equal(t, st.GroupIDs(), ids(all))
	require.Len(t, all.Partitions[0].PendingTransactions, 1)
	one := query.Describe([]groupstate.View{st}, query.DescribeFilter{Group: "txn-open"})
	require.Equal(t, []string{"txn-open"}, ids(one))
	require.Len(t, one.Partitions[0].PendingTransactions, 1, "the transaction holding its offset")
	other := query.Describe([]groupstate.View{st}, query.DescribeFilter{Group: "txn-classic"})
	require.Empty(t, other.Partitions[0].PendingTransactions, "no open transaction holds txn-classic's offsets")
	typed := query.Describe([]groupstate.View{st}, query.DescribeFilter{Types: map[groupstate.GroupType]bool{groupstate.GroupTypeConsumer: true}})
	require.Equal(t, []string{"txn-consumer"}, ids(typed))
	require.Nil(t, typed.Partitions[0].PendingTransactions, "with a type, groups only")

	names := query.Describe([]groupstate.View{stateOf(t, "consumer")}, query.DescribeFilter{})
	require.NotEmpty(t, names.Partitions[0].TopicNames, "Kafka 4.4's offset commits name their topics' ids")
	for _, n := range names.Partitions[0].TopicNames {
		require.Equal(t, n.Name, names.Names[n.TopicID])
	}
}

// TestRebalanceTally: the tally of the rebalances' ends, by cause.
func TestRebalanceTally(t *testing.T) {
	var tally query.RebalanceTally
	end := func(outcome string, ms int64, causes ...explain.Cause) *explain.Event {
		return &explain.Event{Kind: explain.KindRebalanceEnd, Rebalance: &explain.Rebalance{Outcome: outcome, DurationMs: ms, Epoch: 3, Causes: causes}}
	}
	tally.Add(end("converged", 1500, explain.Cause{Kind: "member-joined"}, explain.Cause{Kind: "member-left", Detail: "unknown"}))
	tally.Add(end("superseded", -1, explain.Cause{Kind: "member-joined"}))
	tally.Add(end("open", 90000, explain.Cause{Kind: "new-cause"}))
	tally.Add(&explain.Event{Kind: explain.KindGroupDeleted})
	require.Equal(t, 3, tally.Rebalances)
	require.Equal(t, "3 rebalances: 2 joins, 1 member gone (left or fenced), 1 new-cause; 1 superseded before converging; 1 not converged at the end; the longest took "+
		explain.Duration(90000)+" (epoch 3)", tally.String())
}
