package query

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/stretchr/testify/require"
)

// Activity's shortcuts (the previous record's group without a map lookup; no question to the
// state for a value of the group's own type) agree with asking on every record: on every
// recording and public dump, after every record, the entry of the record's group is the same
// in an Activity with them and in one without, and so are the deleted and known groups at the
// end.
func TestActivityShortcutsAgreeWithAskingAlways(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(testcorpus.Recordings(), "*", "__consumer_offsets-0"))
	require.NotEmpty(t, dirs)
	requireShortcutsAgree(t, dirs)
}

func TestActivityShortcutsAgreeOnPublicDumps(t *testing.T) {
	requireShortcutsAgree(t, testcorpus.PartitionDirs(t, testcorpus.Found(t)))
}

func requireShortcutsAgree(t *testing.T, dirs []string) {
	t.Helper()
	events := 0
	eachPartition(t, dirs, func(dir string, in *input.Input, p int32) {
		fast, slow := NewActivity(), NewActivity()
		slow.askAlways = true
		both := replay.ObserverFunc(func(ev *replay.Event, st groupstate.View) {
			fast.Observe(ev, st)
			slow.Observe(ev, st)
			events++
			if g := ev.Record.Key.Group; g != "" {
				f, s := fast.groups[g], slow.groups[g]
				require.Equal(t, *s, *f, "%s partition %d offset %d group %s", dir, p, ev.Offset, g)
			}
		})
		replayPartition(t, dir, in, p, both)
		require.Equal(t, slow.DeletedIDs(), fast.DeletedIDs(), dir)
		require.Equal(t, slow.KnownIDs(), fast.KnownIDs(), dir)
	})
	require.Positive(t, events)
}

// eachPartition calls f for every partition of every input in dirs (opened in forensic mode).
func eachPartition(t *testing.T, dirs []string, f func(dir string, in *input.Input, p int32)) {
	t.Helper()
	for _, dir := range dirs {
		in, err := input.Open(dir, eventlog.Forensic)
		require.NoError(t, err, dir)
		parts, err := in.Partitions()
		require.NoError(t, err)
		for _, p := range parts {
			f(dir, in, p)
		}
		in.Close()
	}
}

// replayPartition replays partition p of in to its end under o.
func replayPartition(t *testing.T, dir string, in *input.Input, p int32, o replay.Observer) {
	t.Helper()
	_, err := replay.ReplayCuts(context.Background(), in, []replay.Cut{{Partition: p, Until: math.MaxInt64, Observer: o}}, replay.Options{Mode: eventlog.Forensic}, 1)
	require.NoError(t, err, dir)
}

// A simple classic group (offsets only) that a consumer group's metadata record replaces
// changes type without a tombstone: the shortcut for values of the group's own type must not
// take that record for one, or the deletion that follows names the wrong type.
func TestActivitySeesASimpleGroupReplaced(t *testing.T) {
	rec := func(off int64, k recordcodec.Key, v recordcodec.Value) *eventlog.Batch {
		key, value, err := recordcodec.Encode(recordcodec.Record{Key: k, Value: v})
		require.NoError(t, err)
		return &eventlog.Batch{BaseOffset: off, LastOffset: off, Magic: 2, ProducerID: -1, NumRecords: 1,
			Records: []eventlog.Record{{Offset: off, Timestamp: 1000 + off, Key: key, Value: value}}}
	}
	for _, askAlways := range []bool{false, true} {
		a := NewActivity()
		a.askAlways = askAlways
		e := replay.New(0, replay.Options{Observer: a})
		require.NoError(t, e.Apply(rec(0, recordcodec.Key{Type: recordcodec.OffsetCommit, Group: "g", Topic: "t"}, &recordcodec.OffsetCommitValue{Version: 3, Offset: 1, LeaderEpoch: -1})))
		require.NoError(t, e.Apply(rec(1, recordcodec.Key{Type: recordcodec.ConsumerGroupMetadata, Group: "g"}, &recordcodec.ConsumerGroupMetadataValue{Epoch: 1})))
		typ, _ := e.State().GroupType("g")
		require.Equal(t, groupstate.GroupTypeConsumer, typ)
		require.Equal(t, groupstate.GroupTypeConsumer, a.groups["g"].typ, "the entry knows the new type at once")
		require.NoError(t, e.Apply(rec(2, recordcodec.Key{Type: recordcodec.ConsumerGroupTargetAssignmentMetadata, Group: "g"}, nil)))
		require.NoError(t, e.Apply(rec(3, recordcodec.Key{Type: recordcodec.ConsumerGroupMetadata, Group: "g"}, nil)))
		d, ok := a.Deleted("g")
		require.True(t, ok)
		require.Equal(t, Deletion{Offset: 3, Timestamp: 1003, Record: "ConsumerGroupMetadata tombstone", Type: groupstate.GroupTypeConsumer}, d)
	}
}

// Activity is a replay.KeysObserver: an engine may hand it streams records undecoded. On every
// recording and public dump, an Activity watching the replay as itself ends with the same
// entries as one behind an ObserverFunc, which the engine always hands decoded records.
func TestActivityKeysOnlyAgreesWithWholeRecords(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(testcorpus.Recordings(), "*", "__consumer_offsets-0"))
	require.NotEmpty(t, dirs)
	requireKeysOnlyAgrees(t, dirs)
}

func TestActivityKeysOnlyAgreesOnPublicDumps(t *testing.T) {
	requireKeysOnlyAgrees(t, testcorpus.PartitionDirs(t, testcorpus.Found(t)))
}

func requireKeysOnlyAgrees(t *testing.T, dirs []string) {
	t.Helper()
	eachPartition(t, dirs, func(dir string, in *input.Input, p int32) {
		keys, whole := NewActivity(), NewActivity()
		replayPartition(t, dir, in, p, keys)
		replayPartition(t, dir, in, p, replay.ObserverFunc(whole.Observe))
		require.Equal(t, len(whole.groups), len(keys.groups), dir)
		for id, w := range whole.groups {
			require.Contains(t, keys.groups, id, dir)
			require.Equal(t, *w, *keys.groups[id], "%s partition %d group %s", dir, p, id)
		}
	})
}
