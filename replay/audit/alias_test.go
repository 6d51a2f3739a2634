package audit

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// TestBatchAuditKeepsNoAliasedGroupID: an event's group id aliases the batch's buffer, which
// the reader reuses for the next batch. The batch audit counted target-assignment records
// under that aliased string: the next batch rewrote the map's key in place, so the group's
// member records and its metadata record fell under different keys (or a garbage one) and
// check reported a target-assignment-split that is not in the log, now and then (seen on the
// deletions recording: "group \ufffd(\ufffd\ufffdD \ufffd: 1 target-assignment member
// record(s) ... without the target-assignment metadata record").
func TestBatchAuditKeepsNoAliasedGroupID(t *testing.T) {
	// One batch's buffer: each record's group id aliases its own record's bytes.
	buf := []byte("grp-agrp-a")
	alias := func(from, to int) string { return unsafe.String(&buf[from], to-from) }
	obs := New().Observer(0).(*batchAudit)
	event := func(base, offset int64, typ recordcodec.RecordType, group string) *replay.Event {
		return &replay.Event{Batch: &eventlog.Batch{BaseOffset: base}, Offset: offset,
			Record: recordcodec.Record{Key: recordcodec.Key{Type: typ, Group: group}, Value: &recordcodec.ConsumerGroupMetadataValue{}}}
	}
	// Batch 10: a member record and the metadata record of grp-a: atomic, no finding.
	obs.Observe(event(10, 10, recordcodec.ConsumerGroupTargetAssignmentMember, alias(0, 5)), groupstate.View{})
	obs.Observe(event(10, 11, recordcodec.ConsumerGroupTargetAssignmentMetadata, alias(5, 10)), groupstate.View{})
	// The reader reuses the buffer for batch 12 before its records reach the observer (which
	// checks batch 10 on the first of them): the same group at the same place, another record
	// where the metadata record was.
	copy(buf, "grp-azzzzz")
	obs.Observe(event(12, 12, recordcodec.ConsumerGroupMetadata, alias(0, 5)), groupstate.View{})
	obs.flush()
	require.Empty(t, obs.findings)
	for g := range obs.groups {
		require.Equal(t, "grp-a", g)
	}
}
