package audit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
)

// check said nothing about records of unknown types (skipped by replay, as Kafka skips them)
// nor about control batches holding data records (issue 13, item 12). Each is one finding per
// partition (per type), however many records there are.
func TestUnknownTypesAndControlDataKeys(t *testing.T) {
	lb := &logBuilder{t: t, p: 0}
	lb.batch(-1, offsetCommit("g", "t", 0, 5))
	unknown := &eventlog.Batch{Partition: 0, BaseOffset: lb.next, LastOffset: lb.next + 2, Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 3}
	for i := range int64(3) {
		unknown.Records = append(unknown.Records, eventlog.Record{Offset: lb.next + i, Key: []byte{0, 99, 0, 1, 'g'}, Value: []byte{0, 0}})
	}
	lb.next += 3
	lb.log = append(lb.log, unknown)
	// A transactional data batch, then a control batch whose record has an offset commit's key
	// (version 0 type 1 reads as COMMIT) and an end-transaction marker as value, and a proper one.
	lb.batch(7, offsetCommit("g", "t", 1, 9))
	commitValue := []byte{0, 0, 0, 0, 0, 3}
	ctrl := &eventlog.Batch{Partition: 0, BaseOffset: lb.next, LastOffset: lb.next, Magic: 2, ProducerID: 7, ProducerEpoch: 0, BaseSequence: -1, NumRecords: 1,
		Attributes: eventlog.AttrTransactional | eventlog.AttrControl,
		Records:    []eventlog.Record{{Offset: lb.next, Key: []byte{0, 0, 0, 1, 0, 1, 'g', 0, 1, 't'}, Value: commitValue}}}
	lb.next++
	lb.log = append(lb.log, ctrl)
	lb.batch(7, offsetCommit("g", "t", 2, 9))
	good := &eventlog.Batch{Partition: 0, BaseOffset: lb.next, LastOffset: lb.next, Magic: 2, ProducerID: 7, ProducerEpoch: 0, BaseSequence: -1, NumRecords: 1,
		Attributes: eventlog.AttrTransactional | eventlog.AttrControl,
		Records:    []eventlog.Record{{Offset: lb.next, Key: []byte{0, 0, 0, 1}, Value: commitValue}}}
	lb.next++
	lb.log = append(lb.log, good)

	a := New()
	e := lb.replay(a)
	got := a.Finish([]*replay.Engine{e}, nil, 0)
	require.Equal(t, []string{KindUnknownRecordType, KindControlDataKey}, kinds(got))
	require.Equal(t, Finding{Partition: 0, Offset: 1, Kind: KindUnknownRecordType, Time: lb.log[1].Records[0].Timestamp,
		Detail:   "3 record(s) of type 99, unknown to the replayed Kafka version's loader, at offsets 1 to 3: skipped, as Kafka skips them (a newer Kafka's records, or damage?)",
		Next:     "`replay decode INPUT --partition 0 --from-offset 1 --to-offset 1` shows them; a newer --kafka-version may know the type",
		Severity: SeverityMedium, Certainty: explain.CertaintyProved, Evidence: []string{"the record at offset 1 of partition 0"}, Count: 1}, got[0])
	require.Equal(t, Finding{Partition: 0, Offset: 5, Kind: KindControlDataKey, Time: ctrl.Records[0].Timestamp,
		Detail:   "1 record(s) of control batches at offsets 5 to 5 have keys that are not 4-byte version-0 control keys (the first is 10 bytes): data records in a control batch? Kafka reads their first 4 bytes as the control type",
		Next:     "`replay decode INPUT --partition 0 --from-offset 5 --to-offset 5` shows the batch",
		Severity: SeverityMedium, Certainty: explain.CertaintyProved, Evidence: []string{"the record at offset 5 of partition 0"}, Count: 1}, got[1])
}
