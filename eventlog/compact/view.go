package compact

import (
	"fmt"
	"math/bits"
	"sort"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// Compacted is the compacted log as an eventlog.Source: the input read again through the
// plans' decisions. Nothing is materialized, so the writers, a dry run and the proof (replay
// of the compacted log) all read the same decisions the same way.
type Compacted struct {
	src   eventlog.Source
	plans map[int32]*Plan
}

// NewCompacted returns the compacted view of src under the given plans (one per partition,
// each made by NewPlan from the same src).
func NewCompacted(src eventlog.Source, plans ...*Plan) *Compacted {
	c := &Compacted{src: src, plans: map[int32]*Plan{}}
	for _, p := range plans {
		c.plans[p.Partition] = p
	}
	return c
}

// Partitions implements eventlog.Source.
func (c *Compacted) Partitions() ([]int32, error) {
	ps := make([]int32, 0, len(c.plans))
	for p := range c.plans {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps, nil
}

// Offsets implements eventlog.Source. The next offset is the input's: the cleaner always keeps
// the batch that ends at the log end offset.
func (c *Compacted) Offsets(p int32) (first, next int64, err error) {
	pl, ok := c.plans[p]
	if !ok {
		return 0, 0, fmt.Errorf("partition %d not found", p)
	}
	it, err := c.Batches(p, 0)
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	first = pl.End
	if it.Next() {
		first = it.Batch().BaseOffset
	}
	return first, pl.End, it.Err()
}

// Batches implements eventlog.Source. The iterator also implements StatsIterator.
func (c *Compacted) Batches(p int32, from int64) (eventlog.Iterator, error) {
	pl, ok := c.plans[p]
	if !ok {
		return nil, fmt.Errorf("partition %d not found", p)
	}
	in, err := c.src.Batches(p, from)
	if err != nil {
		return nil, err
	}
	// The cursor starts at 0, not at from: the input returns the batch holding from whole, and
	// its records below from must still find their survivors. Skipping ahead is cheap.
	cur, err := pl.surv.cursor(0)
	if err != nil {
		in.Close()
		return nil, err
	}
	return &Iter{plan: pl, in: in, cur: cur, enc: segment.NewEncoder(segment.EncodeOptions{}), now: pl.opts.nowMs()}, nil
}

// Iter iterates compacted batches. Besides eventlog.Iterator it reports Stats and, for a batch
// it rebuilt, its encoding.
type Iter struct {
	plan *Plan
	in   eventlog.Iterator
	cur  *cursor
	enc  *segment.Encoder
	now  int64

	out     eventlog.Batch
	batch   *eventlog.Batch
	recs    []eventlog.Record
	raw     []byte
	rebuilt bool
	stats   Stats
	err     error
	read    int64
	next    int64
}

// Stats returns what the iteration kept and removed so far.
func (it *Iter) Stats() Stats { return it.stats }

// Encoded returns the v2 encoding (log entry framing included) of the current batch when the
// compaction rebuilt it, nil when the batch is the input's unchanged.
func (it *Iter) Encoded() []byte {
	if !it.rebuilt {
		return nil
	}
	return it.raw
}

// Batch implements eventlog.Iterator.
func (it *Iter) Batch() *eventlog.Batch { return it.batch }

// Err implements eventlog.Iterator.
func (it *Iter) Err() error { return it.err }

// Close implements eventlog.Iterator.
func (it *Iter) Close() error {
	if it.in == nil {
		return nil
	}
	err := it.in.Close()
	it.cur.close()
	it.enc.Close()
	it.in = nil
	return err
}

// Next implements eventlog.Iterator.
func (it *Iter) Next() bool {
	if it.in == nil || it.err != nil {
		return false
	}
	for it.in.Next() {
		b := it.in.Batch()
		it.read += b.Origin.Size
		if o := it.plan.opts; o.Progress != nil && it.read >= it.next {
			o.Progress(Progress{Phase: "write", Partition: it.plan.Partition, Bytes: it.read, Total: it.plan.inBytes})
			it.next = it.read + o.ProgressBytes
		}
		out, err := it.filter(b)
		if err != nil {
			it.err = err
			return false
		}
		if out != nil {
			it.batch = out
			it.stats.OutBatches++
			it.stats.OutRecords += int64(len(out.Records))
			if len(out.Records) == 0 {
				it.stats.EmptyBatches++
			}
			return true
		}
	}
	if it.err = it.in.Err(); it.err == nil {
		it.err = it.cur.err
	}
	return false
}

func (it *Iter) remove(why Reason, b *eventlog.Batch, r *eventlog.Record) {
	c := &it.stats.Removed[why]
	c.Records++
	c.Bytes += int64(recordSize(r, b.BaseOffset, b.BaseTimestamp))
}

// filter applies the cleaner's decisions (Cleaner.cleanInto's filter and
// MemoryRecords.filterTo) to one batch: it returns the batch to write (b itself when unchanged)
// or nil when the batch goes.
func (it *Iter) filter(b *eventlog.Batch) (*eventlog.Batch, error) {
	p := it.plan
	st := &it.stats
	st.InBatches++
	st.InRecords += int64(len(b.Records))
	st.InBytes += b.Origin.Size
	it.rebuilt = false
	if b.BaseOffset >= p.StableEnd {
		st.Uncleanable++
		return b, nil
	}
	control := b.Attributes.Control()
	v2 := b.Magic >= 2
	var canDiscard bool
	if control {
		// An already-emptied control batch, or a marker whose transaction had no data batch.
		canDiscard = len(b.Records) == 0 || p.emptyTxn[b.BaseOffset]
	} else {
		canDiscard = v2 && p.isAborted(b)
	}
	horizon, hasHorizon := int64(0), false
	if v2 {
		horizon, hasHorizon = b.DeleteHorizon()
	}
	discardRecords := canDiscard
	if control {
		discardRecords = canDiscard && hasHorizon && horizon <= it.now
	}
	// Kafka keeps an emptied batch when it holds its producer's last sequence (or the last
	// marker of its epoch), and the batch that ends at the log end so the end offset survives.
	retainEmpty := (v2 && p.lastOfActiveProducer(b)) || b.NextOffset() == p.End
	removeAll := func() {
		why := Aborted
		if control {
			why = EmptyMarker
		}
		for i := range b.Records {
			it.remove(why, b, &b.Records[i])
		}
	}
	if discardRecords && !retainEmpty {
		removeAll()
		st.DroppedBatches++
		return nil, nil
	}
	kept := it.recs[:0]
	tombstones := false
	switch {
	case discardRecords:
		removeAll()
	case control:
		kept = append(kept, b.Records...)
	default:
		// v2 tombstones go once the batch's horizon has passed; legacy batches have no horizon,
		// and an offline job has no segment modification times to stand in for Kafka's legacy
		// horizon, so their tombstones are kept and get a horizon like any v2 batch.
		retainDeletes := !v2 || !hasHorizon || it.now < horizon
		for i := range b.Records {
			r := &b.Records[i]
			switch {
			case r.Key == nil:
				it.remove(NoKey, b, r)
			case !it.cur.latest(r.Offset):
				it.remove(Superseded, b, r)
			case r.Value == nil && !retainDeletes:
				it.remove(ExpiredTombstone, b, r)
			default:
				kept = append(kept, *r)
				tombstones = tombstones || r.Value == nil
			}
		}
	}
	it.recs = kept
	if len(kept) > 0 {
		stamp := (tombstones || (canDiscard && control)) && !hasHorizon
		if v2 && len(kept) == len(b.Records) && !stamp {
			return b, nil
		}
		return it.rebuild(b, kept, stamp, hasHorizon, horizon)
	}
	if retainEmpty {
		return it.header(b)
	}
	st.DroppedBatches++
	return nil, nil
}

// rebuild builds the retained records into a new v2 batch as MemoryRecordsBuilder does for the
// cleaner: same offsets range (v2), producer fields, leader epoch, codec, timestamp type,
// transactional and control flags; base timestamp = the delete horizon when there is one,
// otherwise the first retained record's timestamp.
func (it *Iter) rebuild(b *eventlog.Batch, kept []eventlog.Record, stamp, hasHorizon bool, horizon int64) (*eventlog.Batch, error) {
	o := &it.out
	*o = eventlog.Batch{
		Partition: b.Partition, BaseOffset: b.BaseOffset, LastOffset: b.LastOffset,
		PartitionLeaderEpoch: b.PartitionLeaderEpoch, Magic: 2,
		ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, BaseSequence: b.BaseSequence,
		Records: kept, NumRecords: int32(len(kept)), Origin: b.Origin,
	}
	lat := b.Magic > 0 && b.Attributes.TimestampType() == eventlog.LogAppendTime
	attrs := eventlog.Attributes(b.Attributes.Codec())
	if lat {
		attrs |= eventlog.AttrLogAppendTime
	}
	if b.Magic < 2 {
		// Legacy entries become v2 batches spanning their retained records only (Kafka does not
		// override the last offset for them).
		o.BaseOffset, o.LastOffset = kept[0].Offset, kept[len(kept)-1].Offset
		o.PartitionLeaderEpoch, o.ProducerID, o.ProducerEpoch, o.BaseSequence = -1, -1, -1, -1
	} else {
		attrs |= b.Attributes & (eventlog.AttrTransactional | eventlog.AttrControl)
	}
	switch {
	case stamp:
		attrs |= eventlog.AttrDeleteHorizon
		o.BaseTimestamp = it.now + it.plan.opts.DeleteRetention.Milliseconds()
		it.stats.Stamped++
	case hasHorizon:
		attrs |= eventlog.AttrDeleteHorizon
		o.BaseTimestamp = horizon
	default:
		o.BaseTimestamp = kept[0].Timestamp
	}
	o.Attributes = attrs
	if lat {
		o.MaxTimestamp = b.MaxTimestamp
	} else {
		o.MaxTimestamp = -1
		for i := range kept {
			o.MaxTimestamp = max(o.MaxTimestamp, kept[i].Timestamp)
		}
	}
	it.stats.Rebuilt++
	return it.encode(o)
}

// header builds the header-only batch Kafka writes for an emptied batch it must keep
// (DefaultRecordBatch.writeEmptyHeader): no codec, no horizon, base timestamp -1.
func (it *Iter) header(b *eventlog.Batch) (*eventlog.Batch, error) {
	o := &it.out
	*o = eventlog.Batch{
		Partition: b.Partition, BaseOffset: b.BaseOffset, LastOffset: b.LastOffset,
		PartitionLeaderEpoch: b.PartitionLeaderEpoch, Magic: 2,
		Attributes:    b.Attributes & (eventlog.AttrLogAppendTime | eventlog.AttrTransactional | eventlog.AttrControl),
		BaseTimestamp: -1, MaxTimestamp: b.MaxTimestamp,
		ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, BaseSequence: b.BaseSequence,
		Records: it.recs[:0], Origin: b.Origin,
	}
	if b.Magic < 2 {
		o.Attributes = 0
		o.PartitionLeaderEpoch, o.ProducerID, o.ProducerEpoch, o.BaseSequence = -1, -1, -1, -1
	}
	it.stats.Rebuilt++
	return it.encode(o)
}

// encode encodes a rebuilt batch so that it carries its real CRC and size, and so that a
// segment writer can write those bytes without encoding again.
func (it *Iter) encode(o *eventlog.Batch) (*eventlog.Batch, error) {
	var err error
	if it.raw, err = it.enc.AppendBatch(it.raw[:0], o); err != nil {
		return nil, fmt.Errorf("partition %d: re-encode batch at offset %d: %w", o.Partition, o.BaseOffset, err)
	}
	o.CRC = uint32(it.raw[17])<<24 | uint32(it.raw[18])<<16 | uint32(it.raw[19])<<8 | uint32(it.raw[20])
	o.Origin.Size = int64(len(it.raw))
	it.rebuilt = true
	return o, nil
}

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	return (bits.Len64(u|1) + 6) / 7
}

func bytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

// recordSize is the size of r in Kafka's v2 record encoding relative to the given bases.
func recordSize(r *eventlog.Record, base, baseTs int64) int {
	n := 1 + varintLen(r.Timestamp-baseTs) + varintLen(r.Offset-base) + bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		n += bytesLen(h.Key) + bytesLen(h.Value)
	}
	return varintLen(int64(n)) + n
}
