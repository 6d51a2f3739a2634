package replay

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// TestTaskListCacheEqualsGeneralPath replays random histories of streams assignment records
// (21 and 22) through two engines, one applying records from its cache of decoded task lists
// (tasklists.go) and one taking the general path for every record, under every Kafka version,
// and requires the same state (Dump) and the same violations after every record. The lists
// come from a small pool so that they repeat, and the pool holds what makes a hit wrong if the
// cache confuses kinds: repeated subtopologies (record 21 rejects them; record 22 resolves
// them from 4.2, and a record 22 list without epochs has the bytes of a record 21 list),
// repeated and unsorted partitions, tasks without epochs or with null epochs or epoch lists
// of another length (on 4.2+ those take the member epoch, which is not part of the list), and
// empty lists. Records of another group type for the same group id and tombstones interleave.
// The source overwrites each batch after it was applied (applyScribbled), so a cache keeping
// bytes of a record instead of its own copy fails here too.
func TestTaskListCacheEqualsGeneralPath(t *testing.T) {
	for _, v := range groupstate.KafkaVersions {
		var hits, raws int64
		for seed := range 12 {
			r := rand.New(rand.NewPCG(uint64(seed), uint64(v)))
			pool := make([][]recordcodec.TaskIdsWithEpochs, 10)
			for i := range pool {
				pool[i] = randomTaskList(r)
			}
			// Seeds 1, 4, 7, ...: an observer of whole records; 2, 5, 8, ...: one of keys only.
			var seen [2][]string
			opts := func(i int) Options {
				o := Options{Version: v, Mode: eventlog.Forensic}
				switch seed % 3 {
				case 1:
					o.Observer = ObserverFunc(func(ev *Event, _ groupstate.View) {
						rb, err := json.Marshal(ev.Record)
						if err != nil {
							t.Fatal(err)
						}
						seen[i] = append(seen[i], fmt.Sprintf("%d %q %v %s", ev.Offset, ev.Skipped, ev.Violation, rb))
					})
				case 2:
					o.Observer = keysObserver(func(ev *Event, _ groupstate.View) {
						if raw, ok := ev.Record.Value.(*recordcodec.RawValue); ok {
							if raw.Type != ev.Record.Key.Type || raw.ValueVersion() != 0 {
								t.Fatalf("a raw value %+v for key %+v", raw, ev.Record.Key)
							}
							raws++
						}
						seen[i] = append(seen[i], fmt.Sprintf("%d %q %v %+v %v", ev.Offset, ev.Skipped, ev.Violation, ev.Record.Key, ev.Record.Tombstone()))
					})
				}
				return o
			}
			fast, slow := New(0, opts(0)), New(0, opts(1))
			slow.lists.off = true
			for i := range 600 {
				b := &eventlog.Batch{BaseOffset: int64(i), LastOffset: int64(i), Magic: 2, ProducerID: -1, ProducerEpoch: -1,
					BaseSequence: -1, NumRecords: 1, Records: []eventlog.Record{randomStreamsRecord(t, r, pool)}}
				b.Records[0].Offset = int64(i)
				if err := applyScribbled(fast, b); err != nil {
					t.Fatal(err)
				}
				if err := applyScribbled(slow, b); err != nil {
					t.Fatal(err)
				}
				fv, sv := fast.Violations(), slow.Violations()
				if len(fv) != len(sv) || len(fv) > 0 && fv[len(fv)-1].Error() != sv[len(sv)-1].Error() {
					t.Fatalf("Kafka %s seed %d record %d: violations differ:\ncache:   %v\ngeneral: %v", v, seed, i, fv, sv)
				}
				fd, _ := json.Marshal(fast.State().Dump())
				sd, _ := json.Marshal(slow.State().Dump())
				if string(fd) != string(sd) {
					t.Fatalf("Kafka %s seed %d record %d: states differ:\ncache:   %s\ngeneral: %s", v, seed, i, fd, sd)
				}
			}
			if !slices.Equal(seen[0], seen[1]) {
				t.Fatalf("Kafka %s seed %d: observed events differ:\ncache:   %q\ngeneral: %q", v, seed, seen[0], seen[1])
			}
			if seed%3 != 0 && len(seen[0]) != 600 {
				t.Fatalf("Kafka %s seed %d: the observer saw %d events, want 600", v, seed, len(seen[0]))
			}
			if fast.Stats() != slow.Stats() {
				t.Fatalf("Kafka %s seed %d: stats differ:\ncache:   %+v\ngeneral: %+v", v, seed, fast.Stats(), slow.Stats())
			}
			hits += fast.lists.hits
		}
		t.Logf("Kafka %s: %d records from the cache, %d handed undecoded", v, hits, raws)
		// Kafka 4.0 does not know streams records: the cache must not be used there.
		if min := int64(12 * 600 / 10); v != groupstate.Kafka40 && hits < min {
			t.Errorf("Kafka %s: %d records applied from the cache, want at least %d: the test does not exercise it", v, hits, min)
		} else if v != groupstate.Kafka40 && raws == 0 {
			t.Errorf("Kafka %s: the keys observer was never handed an undecoded value", v)
		} else if v == groupstate.Kafka40 && hits != 0 {
			t.Errorf("Kafka 4.0: %d records applied from the cache, want none", hits)
		}
	}
}

// randomTaskList is a list of 0-3 tasks of subtopologies "0"-"2" (repeats possible) over
// partitions 0-5 (repeats and any order possible), each with its epochs (absent, null, or a
// list that matches the partitions or not).
func randomTaskList(r *rand.Rand) []recordcodec.TaskIdsWithEpochs {
	l := make([]recordcodec.TaskIdsWithEpochs, [...]int{0, 1, 1, 2, 2, 2, 3}[r.IntN(7)])
	for i := range l {
		x := &l[i]
		x.SubtopologyId = string(rune('0' + r.IntN(3)))
		x.Partitions = make([]int32, r.IntN(4))
		for j := range x.Partitions {
			x.Partitions[j] = int32(r.IntN(6))
		}
		switch n := len(x.Partitions); r.IntN(6) {
		case 0:
			x.AssignmentEpochs = []int32{} // absent
		case 1:
			x.AssignmentEpochs = nil // null
		case 2:
			x.AssignmentEpochs = make([]int32, (n+1)%4) // of another length
		default:
			x.AssignmentEpochs = make([]int32, n)
			for j := range x.AssignmentEpochs {
				x.AssignmentEpochs[j] = int32(r.IntN(3))
			}
		}
	}
	return l
}

// randomStreamsRecord is a record 21 or 22 of groups "s0" and "s1" and members "m0"-"m2" with
// lists from pool, sometimes a tombstone of either, or a record of a consumer group "s1"
// (which makes the streams records of s1 fail until a tombstone removes it).
func randomStreamsRecord(t *testing.T, r *rand.Rand, pool [][]recordcodec.TaskIdsWithEpochs) eventlog.Record {
	pick := func() []recordcodec.TaskIdsWithEpochs { return pool[r.IntN(len(pool))] }
	plain := func() []recordcodec.TaskIds {
		var l []recordcodec.TaskIds
		for _, x := range pick() {
			l = append(l, recordcodec.TaskIds{SubtopologyId: x.SubtopologyId, Partitions: x.Partitions})
		}
		return l
	}
	group, member := []string{"s0", "s1"}[r.IntN(2)], []string{"m0", "m1", "m2"}[r.IntN(3)]
	var rec recordcodec.Record
	switch n := r.IntN(20); {
	case n == 0:
		rec.Key = recordcodec.Key{Type: recordcodec.ConsumerGroupMetadata, Group: "s1"}
		rec.Value = &recordcodec.ConsumerGroupMetadataValue{Epoch: 1}
	case n == 1:
		rec.Key = recordcodec.Key{Type: recordcodec.ConsumerGroupMetadata, Group: "s1"} // tombstone
	case n == 2:
		rec.Key = recordcodec.Key{Type: recordcodec.StreamsGroupTargetAssignmentMember, Group: group, Member: member}
	case n == 3:
		rec.Key = recordcodec.Key{Type: recordcodec.StreamsGroupCurrentMemberAssignment, Group: group, Member: member}
	case n < 11:
		rec.Key = recordcodec.Key{Type: recordcodec.StreamsGroupTargetAssignmentMember, Group: group, Member: member}
		rec.Value = &recordcodec.StreamsGroupTargetAssignmentMemberValue{ActiveTasks: plain(), StandbyTasks: plain(), WarmupTasks: plain()}
	default:
		rec.Key = recordcodec.Key{Type: recordcodec.StreamsGroupCurrentMemberAssignment, Group: group, Member: member}
		rec.Value = &recordcodec.StreamsGroupCurrentMemberAssignmentValue{MemberEpoch: int32(r.IntN(4)), PreviousMemberEpoch: int32(r.IntN(4)),
			State: int8(r.IntN(4)), ActiveTasks: pick(), StandbyTasks: pick(), WarmupTasks: pick(),
			ActiveTasksPendingRevocation: pick(), StandbyTasksPendingRevocation: pick(), WarmupTasksPendingRevocation: pick()}
	}
	k, v, err := recordcodec.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	return eventlog.Record{Key: k, Value: v}
}

// keysObserver is an ObserverFunc that reads keys only (a KeysObserver).
type keysObserver func(ev *Event, st groupstate.View)

func (f keysObserver) Observe(ev *Event, st groupstate.View) { f(ev, st) }
func (keysObserver) ObservesKeysOnly()                       {}

// The cache stays bounded whatever the log holds: entries per table, bytes of keys over all
// tables, no list over maxCachedListBytes; the list just kept is found.
func TestTaskListCacheBounded(t *testing.T) {
	var c taskListCache
	c.target, c.current = map[string]groupstate.StoredTasks{}, map[string]groupstate.StoredTasks{}
	c.active = map[string]groupstate.StoredActiveTasks{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 60_000 {
		span := make([]byte, 5+r.IntN([]int{64, 1024, 20 << 10}[r.IntN(3)]))
		span[0] = 2
		binary.BigEndian.PutUint32(span[1:], uint32(i)) // distinct spans
		var m map[string]groupstate.StoredTasks
		if i%3 == 0 {
			keepList(&c, c.active, span, groupstate.StoredActiveTasks{})
			_, ok := lookupList(c.active, span)
			if ok != (len(span) <= maxCachedListBytes) {
				t.Fatalf("span %d of %d bytes: found %v after keeping it", i, len(span), ok)
			}
		} else {
			if m = c.target; i%3 == 2 {
				m = c.current
			}
			keepList(&c, m, span, groupstate.StoredTasks{})
			if _, ok := lookupList(m, span); ok != (len(span) <= maxCachedListBytes) {
				t.Fatalf("span %d of %d bytes: found %v after keeping it", i, len(span), ok)
			}
		}
		held := 0
		for _, n := range []int{len(c.target), len(c.current), len(c.active)} {
			if n > maxCachedTaskLists {
				t.Fatalf("a table holds %d lists", n)
			}
		}
		for k := range c.target {
			held += len(k)
		}
		for k := range c.current {
			held += len(k)
		}
		for k := range c.active {
			held += len(k)
		}
		if held > c.keyBytes || c.keyBytes > maxCachedKeyBytes {
			t.Fatalf("after %d lists: keys of %d bytes held, %d counted, bound %d", i, held, c.keyBytes, maxCachedKeyBytes)
		}
	}
}
