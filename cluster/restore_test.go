package cluster

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/groupstate"
)

func off(t string, p int32, o int64, meta string) groupstate.CommittedOffset {
	return groupstate.CommittedOffset{GroupID: "app", Topic: t, Partition: p, OffsetAndMetadata: groupstate.OffsetAndMetadata{CommittedOffset: o, Metadata: meta, RecordOffset: 40 + int64(p)}}
}

func logs(parts map[TopicPartition]LogOffsets, missing ...string) TopicLogs {
	l := TopicLogs{Partitions: parts, Missing: map[string]error{}}
	for _, m := range missing {
		l.Missing[m] = errors.New("UNKNOWN_TOPIC_OR_PARTITION")
	}
	return l
}

func TestPlanRows(t *testing.T) {
	live := Live{
		Group:     LiveGroup{GroupID: "app", Exists: true, Type: "consumer", State: "Empty"},
		Committed: map[TopicPartition]Committed{{"orders", 0}: {Offset: 900}, {"orders", 1}: {Offset: 7, Metadata: "m"}, {"orders", 2}: {Offset: 3}},
		Logs: logs(map[TopicPartition]LogOffsets{
			{"orders", 0}: {Start: 0, End: 1000}, {"orders", 1}: {Start: 0, End: 50}, {"orders", 2}: {Start: 0, End: 50},
			{"audit", 0}: {Start: 100, End: 200},
		}, "gone"),
	}
	p := NewPlan("app", groupstate.GroupTypeConsumer, []groupstate.CommittedOffset{
		off("audit", 0, 12, ""), off("gone", 0, 5, ""), off("orders", 0, 120, "m"), off("orders", 1, 7, "m"),
	}, live, PlanOptions{})
	var got []string
	for _, r := range p.Rows {
		d := "-"
		if r.Delta != nil {
			d = fmt.Sprintf("%+d", *r.Delta)
		}
		got = append(got, fmt.Sprintf("%s:%d %s %s", r.Topic, r.Partition, r.Action, d))
	}
	require.Equal(t, []string{"audit:0 out-of-range -", "gone:0 missing-topic -", "orders:0 commit -780", "orders:1 unchanged +0", "orders:2 live-only -"}, got)
	require.Len(t, p.Refusals, 1)
	require.Contains(t, p.Refusals[0], "1 offset(s) lie outside their partition's log")
	require.Len(t, p.Commits(), 1)

	p = NewPlan("app", groupstate.GroupTypeConsumer, []groupstate.CommittedOffset{off("audit", 0, 12, ""), off("orders", 0, 120, "m")}, live, PlanOptions{AllowOutOfRange: true})
	require.Empty(t, p.Refusals)
	require.Len(t, p.Commits(), 2)
}

func TestPlanRefusals(t *testing.T) {
	base := Live{Logs: logs(map[TopicPartition]LogOffsets{{"t", 0}: {End: 10}}), Committed: map[TopicPartition]Committed{}}
	one := []groupstate.CommittedOffset{off("t", 0, 5, "")}

	active := base
	active.Group = LiveGroup{GroupID: "app", Exists: true, Type: "classic", State: "Stable", Members: []LiveMember{{MemberID: "m-1"}}}
	p := NewPlan("app", groupstate.GroupTypeClassic, one, active, PlanOptions{})
	require.Len(t, p.Refusals, 1)
	require.Contains(t, p.Refusals[0], "has 1 active member(s) (state Stable)")

	share := base
	share.Group = LiveGroup{GroupID: "app", Exists: true, Type: "share", State: "Empty"}
	p = NewPlan("app", groupstate.GroupTypeShare, one, share, PlanOptions{})
	require.Contains(t, p.Refusals[0], "__share_group_state")

	absent := base
	absent.Group = LiveGroup{GroupID: "app"}
	p = NewPlan("app", groupstate.GroupTypeStreams, one, absent, PlanOptions{})
	require.Empty(t, p.Refusals)
	require.Contains(t, p.Notes[0], "does not exist on the cluster now")

	p = NewPlan("app", groupstate.GroupTypeClassic, nil, absent, PlanOptions{})
	require.Contains(t, p.Refusals[0], "no committed offset at the restore point")
}

// TestLogEnd: a partition's log end offset, or why the cluster has none (replay/query.Lag
// joins committed offsets with them).
func TestLogEnd(t *testing.T) {
	l := logs(map[TopicPartition]LogOffsets{{"t", 0}: {End: 10}, {"t", 1}: {End: 10}}, "x")
	end, missing := l.LogEnd("t", 0)
	require.Equal(t, int64(10), end)
	require.Empty(t, missing)
	_, missing = l.LogEnd("t", 9)
	require.Equal(t, "partition not on the cluster", missing)
	_, missing = l.LogEnd("x", 0)
	require.Contains(t, missing, "topic not on the cluster")
}
