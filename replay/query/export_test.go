package query_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay/query"
)

func TestWriteResetCSV(t *testing.T) {
	off := func(g, tp string, p int32, o int64) groupstate.CommittedOffset {
		return groupstate.CommittedOffset{GroupID: g, Topic: tp, Partition: p, OffsetAndMetadata: groupstate.OffsetAndMetadata{CommittedOffset: o}}
	}
	var b strings.Builder
	require.NoError(t, query.WriteResetCSV(&b, []groupstate.CommittedOffset{off("app", "orders", 0, 12), off("app", "orders", 1, 7)}, false))
	require.Equal(t, "orders,0,12\norders,1,7\n", b.String())
	b.Reset()
	require.NoError(t, query.WriteResetCSV(&b, []groupstate.CommittedOffset{off("a,b", "orders", 0, 12), off(`q"x`, "orders", 0, 1), off(" s", "t", 2, 3)}, true))
	require.Equal(t, "\"a,b\",orders,0,12\n\"q\"\"x\",orders,0,1\n\" s\",t,2,3\n", b.String())
	require.ErrorContains(t, query.WriteResetCSV(&b, []groupstate.CommittedOffset{off("a\nb", "t", 0, 1)}, true), "line break")
}

func TestResetCommands(t *testing.T) {
	cs := query.ResetCommands(map[string]groupstate.GroupType{"app": groupstate.GroupTypeConsumer, "old": groupstate.GroupTypeClassic, "s-app": groupstate.GroupTypeStreams}, "HOST:PORT", "my offsets.csv")
	require.Len(t, cs, 2)
	require.Equal(t, "kafka-consumer-groups.sh --bootstrap-server HOST:PORT --group app --group old --reset-offsets --from-file 'my offsets.csv' --dry-run", cs[0].Line())
	require.Empty(t, cs[0].Warning)
	require.Equal(t, "kafka-streams-groups.sh --bootstrap-server HOST:PORT --group s-app --reset-offsets --from-file 'my offsets.csv' --dry-run", cs[1].Line())
	require.Contains(t, cs[1].Warning, "deletes the group's internal topics")
}

func TestTopicPartitionFilter(t *testing.T) {
	tps, err := query.ParseTopicPartitions([]string{"orders:0,3", "my.topic:2"})
	require.NoError(t, err)
	f := query.OffsetFilter{Topics: map[string]bool{"audit": true}, TopicPartitions: tps}
	require.True(t, f.Keep("orders", 3))
	require.False(t, f.Keep("orders", 1))
	require.True(t, f.Keep("audit", 9))
	require.True(t, f.Keep("my.topic", 2))
	require.Equal(t, []string{"audit", "my.topic:2", "orders:0"}, f.Missing([]groupstate.CommittedOffset{{Topic: "orders", Partition: 3}}))
	for _, bad := range []string{"orders", "orders:", ":3", "orders:x", "orders:-1"} {
		_, err := query.ParseTopicPartitions([]string{bad})
		require.Error(t, err, bad)
	}
}
