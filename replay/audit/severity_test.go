package audit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/replay/explain"
)

// TestFoldFencesAndSeverity: three fences of one client id and host in a group are one
// members-fenced finding (low, with the count and the span), two stay as they are; findings
// come by severity; FilterSeverity drops the lower ones.
func TestFoldFencesAndSeverity(t *testing.T) {
	fence := func(group, client string, off int64) Finding {
		e := &explain.Event{Kind: explain.KindMemberFenced, Group: group, At: explain.Position{Offset: off, LastOffset: off, Timestamp: off * 1000},
			Member: &explain.Member{ClientID: client, Host: "h"}, Certainty: explain.CertaintyLikely,
			Removal: &explain.Removal{Joined: &explain.Position{Timestamp: off*1000 - 500}}}
		return Finding{Offset: off, Kind: KindMemberFenced, Group: group, Time: off * 1000, Event: e}
	}
	fs := []Finding{fence("g", "rdkafka", 1), fence("g", "rdkafka", 2), fence("g", "app", 3), fence("g", "rdkafka", 4),
		fence("g", "app", 5), {Offset: 6, Kind: KindOffsetRewind, Group: "g", Time: 6000}}
	got := finish(foldFences(fs))
	require.Equal(t, []string{KindOffsetRewind, KindMemberFenced, KindMemberFenced, KindMembersFenced}, kinds(got))
	folded := got[3]
	require.Equal(t, 3, folded.Count)
	require.Equal(t, SeverityLow, folded.Severity)
	require.Equal(t, int64(1), folded.First.Offset)
	require.Equal(t, int64(4), folded.Last.Offset)
	require.Contains(t, folded.Detail, "3 members of client id rdkafka on host h were fenced between")
	require.Contains(t, folded.Detail, "none a member longer than 500 ms")
	require.NotEmpty(t, folded.Alternatives)
	require.Equal(t, 1, got[1].Count)
	require.Len(t, FilterSeverity(got, SeverityMedium), 3)
	require.Len(t, FilterSeverity(got, SeverityHigh), 1)
	_, err := ParseSeverity("urgent")
	require.Error(t, err)
}
