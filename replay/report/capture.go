package report

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// recordKinds remembers the type of the partition's recent records, so that a mark can say
// which records are behind it ("ConsumerGroupMemberMetadata", "OffsetCommit x6", "COMMIT
// marker") without keeping the log: the timeline hands out an event when the batch that
// shows it ends, or a few batches later when it waits for a topic's name, so the last
// kindsWindow records cover it. An event older than that says so instead of guessing.
type recordKinds struct {
	seed maphash.Seed
	// ring holds the last kindsWindow records, oldest at head once full.
	ring []kindEntry
	head int
}

const kindsWindow = 1 << 14

// kindEntry is one record: its offset, type, and a hash of its group (markers have none).
type kindEntry struct {
	offset int64
	group  uint64
	typ    recordcodec.RecordType
	what   uint8 // kindValue, kindTombstone, kindCommit, kindAbort, kindOther
}

const (
	kindValue = iota
	kindTombstone
	kindCommit
	kindAbort
	kindOther // a control record other than a marker, or a record without a key
)

func newRecordKinds(seed maphash.Seed) *recordKinds {
	return &recordKinds{seed: seed, ring: make([]kindEntry, 0, 256)}
}

// note remembers a record; call it before the timeline sees the record, since the timeline
// may emit the events the record ends (and ask for their kinds).
func (k *recordKinds) note(ev *replay.Event) {
	e := kindEntry{offset: ev.Offset, typ: -1, what: kindOther}
	switch {
	case ev.Marker != nil:
		e.what = kindAbort
		if ev.Marker.Commit {
			e.what = kindCommit
		}
	case ev.Skipped == "":
		e.typ = ev.Record.Key.Type
		e.group = maphash.String(k.seed, ev.Record.Key.Group)
		e.what = kindValue
		if ev.Record.Value == nil {
			e.what = kindTombstone
		}
	}
	if len(k.ring) < kindsWindow {
		k.ring = append(k.ring, e)
	} else {
		k.ring[k.head] = e
		k.head = (k.head + 1) % kindsWindow
	}
}

// at returns the i-th remembered record, oldest first.
func (k *recordKinds) at(i int) *kindEntry {
	return &k.ring[(k.head+i)%len(k.ring)]
}

// describe names the records of group from offset to last: each type with its count, in
// the order they come; "" when they are no longer remembered.
func (k *recordKinds) describe(group string, from, last int64) string {
	n := len(k.ring)
	if n == 0 || k.at(0).offset > from {
		return ""
	}
	// The first record at or after from: a binary search over the ring, oldest first.
	lo, hi := 0, n
	for lo < hi {
		mid := (lo + hi) / 2
		if k.at(mid).offset < from {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := lo
	h := maphash.String(k.seed, group)
	type count struct {
		name string
		n    int
	}
	var counts []count
	for ; i < n; i++ {
		e := k.at(i)
		if e.offset > last {
			break
		}
		if e.what != kindCommit && e.what != kindAbort && e.group != h {
			continue
		}
		name := e.name()
		if j := slices.IndexFunc(counts, func(c count) bool { return c.name == name }); j >= 0 {
			counts[j].n++
			continue
		}
		counts = append(counts, count{name, 1})
	}
	parts := make([]string, 0, len(counts))
	for _, c := range counts {
		if c.n > 1 {
			parts = append(parts, fmt.Sprintf("%s x%d", c.name, c.n))
		} else {
			parts = append(parts, c.name)
		}
	}
	return strings.Join(parts, ", ")
}

func (e *kindEntry) name() string {
	switch e.what {
	case kindCommit:
		return "COMMIT marker"
	case kindAbort:
		return "ABORT marker"
	case kindTombstone:
		return e.typ.String() + " tombstone"
	case kindOther:
		return "control record"
	}
	return e.typ.String()
}
