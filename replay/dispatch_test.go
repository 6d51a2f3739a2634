package replay

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

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
