package query

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/replay"
)

// RecordRef names one record of a partition: its offset, the time Kafka gives it, and how that
// time was read.
type RecordRef struct {
	Offset    int64 `json:"offset"`
	Timestamp int64 `json:"timestamp"` // Unix ms; -1: none (magic 0)
	// TimestampType is the batch's: CreateTime (the record's own timestamp), LogAppendTime
	// (the batch's max timestamp, set by the broker, for every record of the batch) or
	// NoTimestampType (magic 0).
	TimestampType string `json:"timestampType"`
	BatchBase     int64  `json:"batchBaseOffset"`
	Control       bool   `json:"control,omitempty"` // a transaction marker
}

func (r *RecordRef) String() string {
	s := fmt.Sprintf("offset %d", r.Offset)
	if r.Control {
		s += " (transaction marker)"
	}
	if r.Timestamp >= 0 {
		s += ", stamped " + FormatMillis(r.Timestamp)
	}
	return s
}

// Position is where a Point falls in one partition: the records below Until are the state.
type Position struct {
	Partition int32 `json:"partition"`
	// Point is what was asked, as typed back ("end", "41", "2026-02-20T14:05:00.000Z").
	Point string `json:"point"`
	// Until is the exclusive bound of the replay: math.MaxInt64 for the end of the log.
	Until int64 `json:"-"`
	// Last is the last record in the state, the record the point resolves to; nil when the
	// state holds no record (the point is before the first one, or the partition is empty) or,
	// for an offset in a gap, when it was not looked up (see Notes).
	Last *RecordRef `json:"last"`
	// Next is the first record after the cut; nil at the end of the log.
	Next *RecordRef `json:"next"`
	// FirstOffset and NextOffset are the partition's bounds when the point was resolved (-1
	// for the end, which reads nothing).
	FirstOffset int64 `json:"firstOffset"`
	NextOffset  int64 `json:"nextOffset"`
	// Timestamps says how record times were read to place a time point: "the records' own
	// timestamps (CreateTime)", "the batches' max timestamps (LogAppendTime ...)", or both;
	// empty for other points.
	Timestamps string `json:"timestamps,omitempty"`
	// Notes are what the user should know about this resolution (timestamps going backwards,
	// records without timestamps, an offset in a compaction gap).
	Notes []string `json:"notes,omitempty"`
}

// AtEnd reports whether the position is the end of the log as asked (no point given).
func (p *Position) AtEnd() bool { return p.Point == "end" }

// Label says where a partition's state is, for headers: "the end of the log", "offset 41",
// "2026-02-20T14:05:00.000Z, after offset 41" (a nil position is the end of the log).
func (p *Position) Label() string {
	switch {
	case p == nil || p.AtEnd():
		return "the end of the log"
	case strings.ContainsRune(p.Point, 'T'):
		if p.Last == nil {
			return p.Point + ", before the first record"
		}
		return fmt.Sprintf("%s, after offset %d", p.Point, p.Last.Offset)
	}
	return "offset " + p.Point
}

// AtStart returns the start of the log in each partition of parts: an empty state, where a
// diff of one input without a first point starts.
func AtStart(parts []int32) []Position {
	out := make([]Position, len(parts))
	for i, p := range parts {
		out[i] = Position{Partition: p, Point: "start", Until: 0, FirstOffset: -1, NextOffset: -1}
	}
	return out
}

// Since places the first record stamped at or after t in each partition, as Kafka's
// ListOffsets by timestamp does: the records from Until on are kept, and Next is that first
// record (nil: none is stamped at or after t). It is the cut of t minus one millisecond.
func Since(ctx context.Context, src eventlog.Source, parts []int32, t time.Time) ([]Position, error) {
	return Resolve(ctx, src, parts, AtTimeMillis(t.UnixMilli()-1))
}

// Describe says in one sentence where the point fell, as the commands print it on stderr.
func (p *Position) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "partition %d: ", p.Partition)
	switch {
	case p.Last == nil && p.Next == nil:
		b.WriteString("the partition holds no record")
	case p.Last == nil:
		fmt.Fprintf(&b, "%s is before the first record (%s): the state is empty", p.Point, p.Next)
	default:
		fmt.Fprintf(&b, "%s resolves to the record at %s", p.Point, p.Last)
		if p.Next != nil {
			fmt.Fprintf(&b, "; the next record is at %s", p.Next)
		} else {
			b.WriteString("; it is the last record of the log")
		}
	}
	if p.Timestamps != "" {
		fmt.Fprintf(&b, "; record times: %s", p.Timestamps)
	}
	for _, n := range p.Notes {
		b.WriteString("; " + n)
	}
	return b.String()
}

// PointError says why a point cannot be resolved on this input: an offset past the end or
// before the start of a partition, a partition the input does not hold, one bare offset for
// several partitions. It is the user's value that is wrong, not the input.
type PointError struct {
	Partition int32 // -1 when not about one partition
	Msg       string
}

func (e *PointError) Error() string        { return e.Msg }
func (e *PointError) Is(target error) bool { return target == ErrBadPoint }

// Resolve places at in each of the partitions parts of src, in that order.
//
// An offset point is the state after the record at that offset: valid offsets lie between the
// partition's first offset and its last (next offset - 1); one below or past them is a
// PointError that names the partition's range. An offset inside a gap left by compaction is
// valid (the state is that after the last record before it).
//
// A time point cuts each partition before its first record stamped later than the instant, as
// Kafka's ListOffsets by timestamp places a time: the state holds every record before that
// one. Records are read in offset order; a batch whose max timestamp is at or before the
// instant is passed whole, and inside the first later batch each record's time decides. A
// record's time is Kafka's: the record's own timestamp in a CreateTime batch, the batch's max
// timestamp in a LogAppendTime batch, none on magic 0 (such records stay with the records
// before them). Timestamps that go backwards before the cut are reported in Notes; records
// after the cut are not read, so a clock that went back later is not seen (nor does Kafka's
// time index see it).
func Resolve(ctx context.Context, src eventlog.Source, parts []int32, at Point) ([]Position, error) {
	if at.kind == kindOffset && len(parts) > 1 {
		return nil, &PointError{Partition: -1, Msg: fmt.Sprintf("--at-offset %d names no partition, but the input has %d partitions (%s) whose offsets are unrelated: give partition:offset pairs (e.g. --at-offset %d:%d) or select one partition with --partition",
			at.offset, len(parts), partitionRange(parts), parts[0], at.offset)}
	}
	if at.kind == kindOffsets {
		have := map[int32]bool{}
		for _, p := range parts {
			have[p] = true
		}
		for _, p := range at.Partitions() {
			if !have[p] {
				return nil, &PointError{Partition: p, Msg: fmt.Sprintf("--at-offset %d:%d: partition %d is not among the partitions read (%s)", p, at.offsets[p], p, partitionRange(parts))}
			}
		}
	}
	out := make([]Position, 0, len(parts))
	for _, p := range parts {
		pos, err := resolveOne(ctx, src, p, at)
		if err != nil {
			return nil, err
		}
		out = append(out, pos)
	}
	return out, nil
}

// Cuts turns positions into the bounds replay.ReplayCuts takes (observer, when set, gives each
// partition its own).
func Cuts(positions []Position, observer func(p int32) replay.Observer) []replay.Cut {
	cuts := make([]replay.Cut, len(positions))
	for i, pos := range positions {
		cuts[i] = replay.Cut{Partition: pos.Partition, Until: pos.Until}
		if observer != nil {
			cuts[i].Observer = observer(pos.Partition)
		}
	}
	return cuts
}

func resolveOne(ctx context.Context, src eventlog.Source, p int32, at Point) (Position, error) {
	if at.kind == kindEnd || at.kind == kindOffsets && !hasPartition(at, p) {
		// The end needs no reading (the bounds are the replay's business).
		return Position{Partition: p, Point: "end", Until: math.MaxInt64, FirstOffset: -1, NextOffset: -1}, nil
	}
	first, next, err := src.Offsets(p)
	if err != nil {
		return Position{}, fmt.Errorf("partition %d: %w", p, err)
	}
	pos := Position{Partition: p, Point: at.String(), Until: math.MaxInt64, FirstOffset: first, NextOffset: next}
	switch at.kind {
	case kindEnd:
		return pos, nil
	case kindOffset:
		return resolveOffset(ctx, src, pos, at.offset)
	case kindOffsets:
		o, ok := at.offsets[p]
		if !ok {
			pos.Point = "end"
			return pos, nil
		}
		pos.Point = fmt.Sprint(o)
		return resolveOffset(ctx, src, pos, o)
	}
	return resolveTime(ctx, src, pos, at.timeMs)
}

func hasPartition(at Point, p int32) bool {
	_, ok := at.offsets[p]
	return ok
}

func partitionRange(parts []int32) string {
	if len(parts) == 0 {
		return "none"
	}
	contiguous := true
	for i := 1; i < len(parts); i++ {
		if parts[i] != parts[i-1]+1 {
			contiguous = false
		}
	}
	if contiguous && len(parts) > 2 {
		return fmt.Sprintf("%d..%d", parts[0], parts[len(parts)-1])
	}
	s := make([]string, len(parts))
	for i, q := range parts {
		s[i] = fmt.Sprint(q)
	}
	return strings.Join(s, ", ")
}

func resolveOffset(ctx context.Context, src eventlog.Source, pos Position, o int64) (Position, error) {
	p := pos.Partition
	switch {
	case pos.FirstOffset == pos.NextOffset:
		return pos, &PointError{Partition: p, Msg: fmt.Sprintf("--at-offset %d: partition %d holds no record (its next offset is %d): leave --at-offset out", o, p, pos.NextOffset)}
	case o >= pos.NextOffset:
		return pos, &PointError{Partition: p, Msg: fmt.Sprintf("--at-offset %d is past the end of partition %d (offsets %d..%d, next offset %d): leave --at-offset out for the end of the log", o, p, pos.FirstOffset, pos.NextOffset-1, pos.NextOffset)}
	case o < pos.FirstOffset:
		return pos, &PointError{Partition: p, Msg: fmt.Sprintf("--at-offset %d is before the start of partition %d (offsets %d..%d): the records before offset %d are gone (retention or compaction)", o, p, pos.FirstOffset, pos.NextOffset-1, pos.FirstOffset)}
	}
	pos.Until = o + 1
	// The record at o, or the last one before it in o's batch, and the first one after it.
	it, err := src.Batches(p, o)
	if err != nil {
		return pos, err
	}
	defer it.Close()
	for it.Next() && pos.Next == nil {
		b := it.Batch()
		for i := range b.Records {
			r := &b.Records[i]
			if r.Offset <= o {
				pos.Last = ref(b, r)
			} else if pos.Next == nil {
				pos.Next = ref(b, r)
				break
			}
		}
	}
	if err := it.Err(); err != nil {
		return pos, fmt.Errorf("partition %d: %w", p, err)
	}
	if pos.Last == nil || pos.Last.Offset != o {
		if last, err := lastBefore(ctx, src, p, o); err != nil {
			return pos, err
		} else if last != nil {
			pos.Last = last
		}
		pos.Notes = append(pos.Notes, fmt.Sprintf("no record has offset %d (compaction removed it): the state is the one after the last record before it", o))
	}
	return pos, nil
}

// lastBefore scans partition p from its start for the last record at or before o (an offset in
// a compaction gap, where the batch at o does not hold it).
func lastBefore(ctx context.Context, src eventlog.Source, p int32, o int64) (*RecordRef, error) {
	it, err := src.Batches(p, 0)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var last *RecordRef
	n := 0
	for it.Next() {
		if n++; n%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b := it.Batch()
		if b.BaseOffset > o {
			break
		}
		for i := range b.Records {
			if r := &b.Records[i]; r.Offset <= o {
				last = ref(b, r)
			}
		}
	}
	return last, it.Err()
}

func ref(b *eventlog.Batch, r *eventlog.Record) *RecordRef {
	tt := b.Attributes.TimestampType().String()
	if b.Magic == 0 {
		tt = "NoTimestampType"
	}
	return &RecordRef{Offset: r.Offset, Timestamp: b.RecordTimestamp(r), TimestampType: tt, BatchBase: b.BaseOffset, Control: b.Attributes.Control()}
}

func resolveTime(ctx context.Context, src eventlog.Source, pos Position, t int64) (Position, error) {
	p := pos.Partition
	it, err := src.Batches(p, 0)
	if err != nil {
		return pos, err
	}
	defer it.Close()
	var (
		kinds         = map[string]bool{}
		maxSeen int64 = -1
		backAt  *RecordRef
		backs   int
		noTime  int
		n       int
	)
scan:
	for it.Next() {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return pos, err
			}
		}
		b := it.Batch()
		if len(b.Records) == 0 {
			continue
		}
		kinds[timestampKind(b)] = true
		if b.Magic > 0 && b.MaxTimestamp <= t && b.Attributes.TimestampType() == eventlog.LogAppendTime {
			// Every record carries the batch's time: the whole batch is in.
			pos.Last = ref(b, &b.Records[len(b.Records)-1])
			maxSeen = max(maxSeen, b.MaxTimestamp)
			continue
		}
		for i := range b.Records {
			r := &b.Records[i]
			ts := b.RecordTimestamp(r)
			if ts < 0 {
				noTime++
				pos.Last = ref(b, r)
				continue
			}
			if ts > t {
				pos.Next = ref(b, r)
				pos.Until = r.Offset
				break scan
			}
			if ts < maxSeen {
				backs++
				if backAt == nil {
					backAt = ref(b, r)
				}
			}
			maxSeen = max(maxSeen, ts)
			pos.Last = ref(b, r)
		}
	}
	if err := it.Err(); err != nil {
		return pos, fmt.Errorf("partition %d: %w", p, err)
	}
	var basis []string
	if kinds["CreateTime"] {
		basis = append(basis, "the records' own timestamps (CreateTime)")
	}
	if kinds["LogAppendTime"] {
		basis = append(basis, "the batches' max timestamps (LogAppendTime: the broker stamps every record of a batch)")
	}
	if kinds["NoTimestampType"] {
		basis = append(basis, "none for magic 0 messages, which have no timestamp")
	}
	pos.Timestamps = strings.Join(basis, " and ")
	if backs > 0 {
		pos.Notes = append(pos.Notes, fmt.Sprintf("timestamps go backwards %d time(s) before the cut, first at %s (a clock set back or records from another broker): the cut is at the first record stamped later than the time, as Kafka's ListOffsets places it", backs, backAt))
	}
	if noTime > 0 {
		pos.Notes = append(pos.Notes, fmt.Sprintf("%d record(s) have no timestamp (magic 0): they are kept with the records before them", noTime))
	}
	return pos, nil
}

func timestampKind(b *eventlog.Batch) string {
	if b.Magic == 0 {
		return "NoTimestampType"
	}
	return b.Attributes.TimestampType().String()
}

// IsPointError reports whether err is a PointError or a ParseOffsets/ParseTime error: the
// value the user gave, not the input, is wrong.
func IsPointError(err error) bool { return errors.Is(err, ErrBadPoint) }
