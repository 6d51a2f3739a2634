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
// It is one accelerator with one entry point, applyStreamsLists: for a record 21 or 22 it
// either finds every list (a hit: dispatch's dispatchStored applies the stored lists) or
// notes the lists that missed, which settle adds once dispatch applied the record on the
// general path. The rest of the engine knows of it only that settle is due (pending).
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
	// The record being applied: every list found (the stored lists are hitTarget or
	// hitCurrent, as its type), or the lists that missed, to add once it is applied.
	pending    bool // lists missed: settle has work
	hitTarget  groupstate.StoredStreamsTarget
	hitCurrent groupstate.StoredStreamsAssignment
	missed     listMask
}

// listMask says which of a record's lists (TaskListSpans.Lists) missed the cache: bit i for
// list i.
type listMask uint8

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

// applyStreamsLists is the cache's entry point, for a record 21 or 22 value: when the
// engine's version replays the key's type and every list of the value is in the cache, it
// applies the record from the stored lists (dispatchStored) and reports done. Otherwise the
// general path decodes the record (and names any problem) and dispatch applies it, and
// settle then adds the lists that missed.
func (e *Engine) applyStreamsLists(b *eventlog.Batch, r *eventlog.Record) (done bool, err error) {
	c, rec := &e.lists, &e.rec
	if c.off {
		return false, nil
	}
	k := &rec.Key
	if *k, err = (recordcodec.Decoder{Layout: e.layout, NoCopy: true}).Key(r.Key); err != nil ||
		!e.opts.Version.KnowsRecordType(int16(k.Type)) || !e.opts.Version.ReplaysRecordType(int16(k.Type)) {
		return false, nil
	}
	if !c.find(k.Type, r.Value) {
		return false, nil
	}
	// An observer sees the decoded record, as on the general path (which names the problem
	// if it does not decode); one that reads keys only gets the value's bytes.
	if e.keysOnly {
		e.raw = recordcodec.RawValue{Type: k.Type, Bytes: r.Value}
		rec.Value = &e.raw
	} else if e.opts.Observer != nil && e.decode(rec, r.Key, r.Value) != nil {
		c.forget()
		return false, nil
	}
	err = e.dispatchStored(k)
	c.forget()
	if err != nil {
		return true, e.violation(b, r, k.Type, false, err)
	}
	c.hits++
	e.stats.Applied[k.Type]++
	if e.opts.Observer != nil {
		e.observe(b, r, rec, nil)
	}
	return true, nil
}

// find scans a record 21 or 22 value and looks its lists up: true when every one is in the
// cache (a hit, with the stored lists in hitTarget or hitCurrent); otherwise missed says which
// lists to add once the general path applied the record (none when the scan failed).
func (c *taskListCache) find(t recordcodec.RecordType, value []byte) bool {
	if c.target == nil {
		c.target, c.current = map[string]groupstate.StoredTasks{}, map[string]groupstate.StoredTasks{}
		c.active = map[string]groupstate.StoredActiveTasks{}
	}
	sp := &c.spans
	var missed listMask
	switch t {
	case recordcodec.StreamsGroupTargetAssignmentMember:
		if !sp.ScanTargetAssignmentMember(value) {
			return false
		}
		target := &c.hitTarget
		for i, dst := range [...]*groupstate.StoredTasks{&target.Active, &target.Standby, &target.Warmup} {
			var ok bool
			if *dst, ok = lookupList(c.target, sp.Lists[i]); !ok {
				missed |= 1 << i
			}
		}
	case recordcodec.StreamsGroupCurrentMemberAssignment:
		if !sp.ScanCurrentMemberAssignment(value) {
			return false
		}
		current := &c.hitCurrent
		for i, dst := range [...]*groupstate.StoredActiveTasks{&current.Active, &current.ActivePendingRevocation} {
			i := 3 * i // lists 0 and 3
			var ok bool
			if *dst, ok = lookupList(c.active, sp.Lists[i]); !ok {
				// A list whose tasks take the member epoch is never cached: it misses, but is
				// not to be added.
				missed |= 1 << 7
				if sp.WithEpochs[i] {
					missed |= 1 << i
				}
			}
		}
		for i, dst := range [...]*groupstate.StoredTasks{1: &current.Standby, 2: &current.Warmup,
			4: &current.StandbyPendingRevocation, 5: &current.WarmupPendingRevocation} {
			if dst == nil {
				continue
			}
			var ok bool
			if *dst, ok = lookupList(c.current, sp.Lists[i]); !ok {
				missed |= 1 << i
			}
		}
	default:
		return false
	}
	c.missed = missed &^ (1 << 7)
	c.pending = c.missed != 0
	return missed == 0
}

// settle ends the cache's part in a record whose lists missed, once dispatch applied it on
// the general path (applied: without a violation): it adds those lists, as the state now
// stores them.
func (c *taskListCache) settle(v groupstate.View, rec *recordcodec.Record, applied bool) {
	if applied {
		c.keep(v, rec.Key.Type, rec.Key.Group, rec.Key.Member)
	}
	c.forget()
}

// forget drops what find noted of the record being applied.
func (c *taskListCache) forget() { c.pending, c.missed = false, 0 }

// keep adds the lists of the record 21 or 22 just applied that missed the cache, as the
// state now stores them.
func (c *taskListCache) keep(v groupstate.View, t recordcodec.RecordType, group, member string) {
	sp, missed := &c.spans, c.missed
	switch t {
	case recordcodec.StreamsGroupTargetAssignmentMember:
		st, ok := v.StreamsStoredTarget(group, member)
		if !ok {
			return
		}
		for i, l := range [...]groupstate.StoredTasks{st.Active, st.Standby, st.Warmup} {
			if missed&(1<<i) != 0 {
				keepList(c, c.target, sp.Lists[i], l)
			}
		}
	case recordcodec.StreamsGroupCurrentMemberAssignment:
		st, ok := v.StreamsStoredAssignment(group, member)
		if !ok {
			return
		}
		for i, l := range [...]groupstate.StoredActiveTasks{st.Active, st.ActivePendingRevocation} {
			if missed&(1<<(3*i)) != 0 {
				keepList(c, c.active, sp.Lists[3*i], l)
			}
		}
		for i, l := range [...]groupstate.StoredTasks{1: st.Standby, 2: st.Warmup, 4: st.StandbyPendingRevocation, 5: st.WarmupPendingRevocation} {
			if missed&(1<<i) != 0 && i%3 != 0 {
				keepList(c, c.current, sp.Lists[i], l)
			}
		}
	}
}
