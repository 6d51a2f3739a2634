package replay

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// TestEveryRecordTypeHasAReplayRule walks the schema's record types: every type a Kafka
// version replays has a value schema in that version's layout and a dispatch case for its
// value and its tombstone (whatever the state then says about the record), so adding a record
// type to the schema without a replay rule fails here.
func TestEveryRecordTypeHasAReplayRule(t *testing.T) {
	replayed := 0
	for _, v := range groupstate.KafkaVersions {
		e := New(0, Options{Version: v})
		for id := range recordcodec.NumRecordTypes {
			typ := recordcodec.RecordType(id)
			if !v.ReplaysRecordType(int16(id)) {
				continue
			}
			replayed++
			val := recordcodec.NewValue(typ, e.layout)
			require.NotNil(t, val, "Kafka %s replays type %d (%s) but layout %s has no value schema for it", v, id, typ, e.layout)
			key := recordcodec.Key{Type: typ, Group: "g", Topic: "t", Member: "m", Regex: "r"}
			err := e.dispatch(&recordcodec.Record{Key: key, Value: val}, 0, groupstate.NoProducerID)
			require.False(t, errors.Is(err, errNoReplayRule), "Kafka %s, type %d (%s): %v", v, id, typ, err)
			err = e.dispatch(&recordcodec.Record{Key: key}, 1, groupstate.NoProducerID)
			require.False(t, errors.Is(err, errNoReplayRule), "Kafka %s, type %d (%s) tombstone: %v", v, id, typ, err)
		}
	}
	require.Greater(t, replayed, 5*20, "the walk found too few replayed types")
}

// The observer hand-off (engine.go observe) fills the event field by field rather
// than from a fresh literal: what an earlier event set (a marker, a skip, a violation, another
// record's member or raw key) must not leak into a commit's event. The field counts make this
// test fail when Event or recordcodec.Key grows a field that path does not reset.
func TestOffsetCommitEventResetsEveryField(t *testing.T) {
	require.Equal(t, 8, reflect.TypeFor[Event]().NumField(), "a new Event field: reset it in observe")
	require.Equal(t, 7, reflect.TypeFor[recordcodec.Key]().NumField(), "a new Key field: reset it in observe")
	var seen Event
	e := New(3, Options{Observer: ObserverFunc(func(ev *Event, _ groupstate.View) { seen = *ev })})
	e.ev = Event{Partition: 9, Offset: 99, Timestamp: 99, Record: recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupMemberMetadata, Group: "old",
		Topic: "old", Partition: 9, Member: "m", Regex: "r", Raw: []byte{1}}}, Marker: &Marker{ProducerID: 5}, Skipped: "control", Violation: &Violation{}}
	key, value, err := recordcodec.Encode(recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: "g", Topic: "t", Partition: 2},
		Value: &recordcodec.OffsetCommitValue{Version: 3, Offset: 42, LeaderEpoch: -1, CommitTimestamp: 7}})
	require.NoError(t, err)
	b := &eventlog.Batch{Partition: 3, BaseOffset: 10, LastOffset: 10, Magic: 2, ProducerID: -1, NumRecords: 1,
		Records: []eventlog.Record{{Offset: 10, Timestamp: 1000, Key: key, Value: value}}}
	require.NoError(t, e.Apply(b))
	require.Equal(t, int32(3), seen.Partition)
	require.Equal(t, int64(10), seen.Offset)
	require.Equal(t, int64(1000), seen.Timestamp)
	require.Equal(t, recordcodec.Key{Type: recordcodec.OffsetCommit, Group: "g", Topic: "t", Partition: 2}, seen.Record.Key)
	require.Equal(t, int64(42), seen.Record.Value.(*recordcodec.OffsetCommitValue).Offset)
	require.Nil(t, seen.Marker)
	require.Empty(t, seen.Skipped)
	require.Nil(t, seen.Violation)
}
