package replay

import (
	"unsafe"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// taskListCache remembers, for the task lists of streams assignment records (records 21 and
// 22), the list the state stored for each encoded list it met: a streams coordinator writes
// the same lists again and again (every member of alike groups; a member keeping its tasks
// while its epoch moves on), and a record whose every list is in the cache is replayed from
// the stored lists (groupstate's Replay*Stored), without decoding, converting, putting into
// canonical form, hashing and comparing them.
//
// What makes a hit right: a list's canonical form is a function of its bytes, of the kind of
// list (record 21's lists reject a repeated subtopology that record 22's resolve from 4.2, and
// record 22's active lists keep epochs), and of the state's Kafka version, which is the
// engine's for its whole life. So there is one table per kind, and the active lists are cached
// only when every task came with its epoch (on 4.2+ the others take the member epoch, which
// is not part of the list). Entries are added after the general path applied the record, from
// the lists the state then holds, so a list that fails a rule is never cached: its record
// fails again on the general path, with the general path's error.
//
// It is a cache, and bounded whatever the log holds: a table holding maxCachedTaskLists
// entries is emptied before it takes another, a list longer than maxCachedListBytes encoded is
// never cached, and all tables are emptied once their keys would pass maxCachedKeyBytes. The
// bytes bound the stored lists the cache keeps alive after the state let them go (a list's
// stored form is a few times its encoding) as well as the keys.
type taskListCache struct {
	target, current map[string]groupstate.StoredTasks
	active          map[string]groupstate.StoredActiveTasks
	keys            []byte                    // the current chunk the keys are copied into (keys alias it)
	keyBytes        int                       // of the keys the tables hold
	spans           recordcodec.TaskListSpans // of the record being applied
	hits            int64                     // records applied from the cache (for tests)
	off             bool                      // the general path for every record (for tests)
}

// listMask says which of a record's lists (TaskListSpans.Lists) missed the cache.
type listMask [6]bool

const (
	maxCachedTaskLists = 1 << 12
	maxCachedListBytes = 16 << 10
	maxCachedKeyBytes  = 4 << 20
	keyChunkBytes      = 64 << 10
)

// emptyTaskList is the encoding of a list with no entries (compact count 0): the stored list
// is nil, with no need to look it up.
const emptyTaskList = 1

func lookupList[T any](m map[string]T, span []byte) (T, bool) {
	if len(span) == 1 && span[0] == emptyTaskList {
		var zero T
		return zero, true
	}
	t, ok := m[unsafe.String(unsafe.SliceData(span), len(span))]
	return t, ok
}

// keepList adds span's stored list to m (one of c's tables).
func keepList[T any](c *taskListCache, m map[string]T, span []byte, t T) {
	if len(span) == 1 && span[0] == emptyTaskList || len(span) > maxCachedListBytes {
		return
	}
	if c.keyBytes+len(span) > maxCachedKeyBytes {
		clear(c.target)
		clear(c.current)
		clear(c.active)
		c.keyBytes, c.keys = 0, nil
	}
	if len(m) >= maxCachedTaskLists {
		clear(m) // its keys' bytes stay counted until the next emptying of all
	}
	if cap(c.keys)-len(c.keys) < len(span) {
		// A new chunk: the keys in the old one stay valid for as long as a table holds them.
		c.keys = make([]byte, 0, keyChunkBytes)
	}
	start := len(c.keys)
	c.keys = append(c.keys, span...)
	c.keyBytes += len(span)
	m[unsafe.String(&c.keys[start], len(span))] = t
}

// applyStreamsAssignmentFast applies a record 21 or 22 value whose lists are all in the
// cache, and reports whether it did. Otherwise it returns the lists that missed, for
// keepStreamsLists once the general path applied the record.
func (e *Engine) applyStreamsAssignmentFast(b *eventlog.Batch, r *eventlog.Record, k recordcodec.Key) (done bool, missed listMask, err error) {
	c := &e.lists
	if c.target == nil {
		c.target, c.current = map[string]groupstate.StoredTasks{}, map[string]groupstate.StoredTasks{}
		c.active = map[string]groupstate.StoredActiveTasks{}
	}
	sp, t := &c.spans, k.Type
	var target groupstate.StoredStreamsTarget
	var current groupstate.StoredStreamsAssignment
	hit := true
	switch t {
	case recordcodec.StreamsGroupTargetAssignmentMember:
		if !sp.ScanTargetAssignmentMember(r.Value) {
			return false, missed, nil
		}
		for i, dst := range [...]*groupstate.StoredTasks{&target.Active, &target.Standby, &target.Warmup} {
			var ok bool
			if *dst, ok = lookupList(c.target, sp.Lists[i]); !ok {
				missed[i], hit = true, false
			}
		}
	case recordcodec.StreamsGroupCurrentMemberAssignment:
		if !sp.ScanCurrentMemberAssignment(r.Value) {
			return false, missed, nil
		}
		for i, dst := range [...]*groupstate.StoredActiveTasks{&current.Active, &current.ActivePendingRevocation} {
			i := 3 * i // lists 0 and 3
			var ok bool
			if *dst, ok = lookupList(c.active, sp.Lists[i]); !ok {
				// A list whose tasks take the member epoch is never cached.
				missed[i], hit = sp.WithEpochs[i], false
			}
		}
		for i, dst := range [...]*groupstate.StoredTasks{1: &current.Standby, 2: &current.Warmup,
			4: &current.StandbyPendingRevocation, 5: &current.WarmupPendingRevocation} {
			if dst == nil {
				continue
			}
			var ok bool
			if *dst, ok = lookupList(c.current, sp.Lists[i]); !ok {
				missed[i], hit = true, false
			}
		}
	default:
		return false, missed, nil
	}
	if !hit {
		return false, missed, nil
	}
	// An observer sees the decoded record, as on the general path (which names the problem
	// if it does not decode); one that reads keys only gets the value's bytes.
	rec := &e.rec
	if e.keysOnly {
		e.raw = recordcodec.RawValue{Type: t, Bytes: r.Value}
		*rec = recordcodec.Record{Key: k, Value: &e.raw}
	} else if e.opts.Observer != nil && e.decode(rec, r.Key, r.Value) != nil {
		return false, listMask{}, nil
	}
	if t == recordcodec.StreamsGroupTargetAssignmentMember {
		err = e.state.ReplayStreamsGroupTargetAssignmentMemberStored(k.Group, k.Member, target)
	} else {
		err = e.state.ReplayStreamsGroupCurrentMemberAssignmentStored(k.Group, k.Member, sp.MemberEpoch, sp.PreviousMemberEpoch, sp.State, current)
	}
	if err != nil {
		return true, missed, e.violation(b, r, t, false, err)
	}
	e.stats.Applied[t]++
	c.hits++
	if e.opts.Observer != nil {
		e.observe(b, r, func(ev *Event) { ev.Record = *rec })
	}
	return true, missed, nil
}

// keepStreamsLists adds the lists of the record 21 or 22 just applied that missed the cache,
// as the state now stores them.
func (e *Engine) keepStreamsLists(t recordcodec.RecordType, group, member string, missed listMask) {
	c := &e.lists
	sp := &c.spans
	v := e.state.View()
	switch t {
	case recordcodec.StreamsGroupTargetAssignmentMember:
		st, ok := v.StreamsStoredTarget(group, member)
		if !ok {
			return
		}
		for i, l := range [...]groupstate.StoredTasks{st.Active, st.Standby, st.Warmup} {
			if missed[i] {
				keepList(c, c.target, sp.Lists[i], l)
			}
		}
	case recordcodec.StreamsGroupCurrentMemberAssignment:
		st, ok := v.StreamsStoredAssignment(group, member)
		if !ok {
			return
		}
		for i, l := range [...]groupstate.StoredActiveTasks{st.Active, st.ActivePendingRevocation} {
			if missed[3*i] {
				keepList(c, c.active, sp.Lists[3*i], l)
			}
		}
		for i, l := range [...]groupstate.StoredTasks{1: st.Standby, 2: st.Warmup, 4: st.StandbyPendingRevocation, 5: st.WarmupPendingRevocation} {
			if missed[i] && i%3 != 0 {
				keepList(c, c.current, sp.Lists[i], l)
			}
		}
	}
}

// tryStreamsAssignmentFast decodes the key of a record 21 or 22 value and applies it from the
// cache when the engine's version replays the type (applyStreamsAssignmentFast); anything
// unusual is left to the general path, which names the problem.
func (e *Engine) tryStreamsAssignmentFast(b *eventlog.Batch, r *eventlog.Record) (bool, listMask, error) {
	k, err := recordcodec.Decoder{Layout: e.layout, NoCopy: true}.Key(r.Key)
	if err != nil || !e.opts.Version.KnowsRecordType(int16(k.Type)) || !e.opts.Version.ReplaysRecordType(int16(k.Type)) {
		return false, listMask{}, nil
	}
	return e.applyStreamsAssignmentFast(b, r, k)
}
