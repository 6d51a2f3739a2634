package compact

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"sort"

	"github.com/coordlog/coordlog/eventlog"
)

// Control record types that end a transaction (Kafka's ControlRecordType ABORT and COMMIT).
const (
	controlAbort  = 0
	controlCommit = 1
)

// controlType parses the type of a control batch's first record: int16 version, int16 type.
// -1 when the batch has no record or the key is too short (Kafka then treats it as unknown).
func controlType(b *eventlog.Batch) int {
	if len(b.Records) == 0 || len(b.Records[0].Key) < 4 {
		return -1
	}
	return int(int16(binary.BigEndian.Uint16(b.Records[0].Key[2:4])))
}

// producer is what Kafka's producer state manager knows about a producer id at the end of the
// log, reduced to what the cleaner asks (UnifiedLog.lastRecordsOfActiveProducers).
type producer struct {
	epoch    int16
	lastData int64 // last offset of the producer's latest data batch in its current epoch, -1 if none
	lastTs   int64 // max timestamp of its latest batch
	txnFirst int64 // first offset of its open transaction, -1 if none
}

// span is an aborted transaction: data batches of its producer in [first, end] are aborted
// (end = the ABORT marker's offset).
type span struct{ first, end int64 }

// Plan is the result of the scan of one partition: which records are the latest of their key,
// which transactions aborted, which markers closed empty transactions, the producers' state and
// where cleaning stops. Batches then derives the compacted log from it and the same input,
// as many times as needed. Close removes its spill files.
type Plan struct {
	Partition int32
	// First and End are the input's first offset and log end offset (next offset).
	First, End int64
	// StableEnd is where cleaning stops: the first offset of the earliest transaction still
	// open at the end of the log (Kafka's last stable offset), End when none is open.
	StableEnd int64
	// Keys is the number of distinct keys in the cleaned range.
	Keys int64

	opts      Options
	dir       string
	surv      *survivors
	aborted   map[int64][]span
	emptyTxn  map[int64]bool // base offsets of COMMIT/ABORT batches whose transaction had no data batch
	producers map[int64]*producer
	spilled   bool
	inBytes   int64
}

// Close removes the plan's temporary files.
func (p *Plan) Close() error {
	if p.dir == "" {
		return nil
	}
	err := os.RemoveAll(p.dir)
	p.dir = ""
	return err
}

// Spilled reports whether the key index went to disk.
func (p *Plan) Spilled() bool { return p.spilled }

// pendingTxn holds the keyed records of a producer's transaction until its marker says
// whether it committed: Kafka's cleaner never lets an aborted record into its offset map, and
// offline the outcome is only known at the marker.
type pendingTxn struct {
	keys []byte
	ents []pendingRec
}

type pendingRec struct {
	off      int64
	from, to int
}

// NewPlan scans partition part of src once (twice when a transaction is still open at the end
// of the log, to index only the cleanable range below it).
func NewPlan(ctx context.Context, src eventlog.Source, part int32, opts Options) (*Plan, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	first, end, err := src.Offsets(part)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.TempDir, "coordlog-compact-")
	if err != nil {
		return nil, err
	}
	p := &Plan{Partition: part, First: first, End: end, StableEnd: end, opts: opts, dir: dir,
		aborted: map[int64][]span{}, emptyTxn: map[int64]bool{}, producers: map[int64]*producer{}}
	if err := p.scan(ctx, src, math.MaxInt64, "index"); err != nil {
		p.Close()
		return nil, err
	}
	for _, pr := range p.producers {
		if pr.txnFirst >= 0 && pr.txnFirst < p.StableEnd {
			p.StableEnd = pr.txnFirst
		}
	}
	if p.StableEnd < p.End && p.surv.Len() > 0 && p.needsReindex() {
		// Records at or past the last stable offset must not supersede earlier ones (Kafka's
		// offset map covers only the cleanable range): index again, up to it.
		if err := p.scan(ctx, src, p.StableEnd, "reindex"); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// needsReindex reports whether some survivor lies at or past StableEnd.
func (p *Plan) needsReindex() bool {
	c, err := p.surv.cursor(p.StableEnd)
	if err != nil {
		return true
	}
	defer c.close()
	return c.head != exhausted
}

// putChunk carries index puts from the reading goroutine to the indexing one: keys are
// appended to one buffer, ents[i] ends at ends[i].
type putChunk struct {
	keys []byte
	offs []int64
	ends []int
}

func (c *putChunk) add(key []byte, off int64) {
	c.keys = append(c.keys, key...)
	c.offs = append(c.offs, off)
	c.ends = append(c.ends, len(c.keys))
}

func (c *putChunk) reset() {
	c.keys, c.offs, c.ends = c.keys[:0], c.offs[:0], c.ends[:0]
}

const chunkBytes = 1 << 20

// scan builds the key index of the records below limit; on the first scan (limit MaxInt64)
// it also learns transactions and producers. Reading and decoding (this goroutine) and
// indexing (a second one, fed chunks of copied keys) overlap, so a scan uses two cores: on
// heavily overwritten logs the index lookups cost about as much as decoding.
func (p *Plan) scan(ctx context.Context, src eventlog.Source, limit int64, phase string) error {
	idx := newKeyIndex(p.opts.IndexMemory, p.dir)
	full := make(chan *putChunk, 2)
	free := make(chan *putChunk, 3)
	for i := 0; i < 3; i++ {
		free <- &putChunk{}
	}
	idxErr := make(chan error, 1)
	go func() {
		var err error
		for c := range full {
			if err == nil {
				err = idx.putMany(c.keys, c.offs, c.ends)
			}
			c.reset()
			free <- c
		}
		idxErr <- err
	}()
	readErr := p.read(ctx, src, limit, phase, full, free)
	close(full)
	err := <-idxErr
	if readErr != nil {
		idx.discard()
		return readErr
	}
	if err != nil {
		idx.discard()
		return err
	}
	p.spilled = len(idx.runs) > 0
	s, err := idx.finish()
	if err != nil {
		return err
	}
	p.surv = s
	p.Keys = s.Len()
	return nil
}

// read is the reading half of scan: it decodes batches, learns transactions and producers on
// the first scan, holds transactional records back until their marker, and sends the puts.
func (p *Plan) read(ctx context.Context, src eventlog.Source, limit int64, phase string, full chan<- *putChunk, free <-chan *putChunk) error {
	learn := limit == math.MaxInt64
	pending := map[int64]*pendingTxn{}
	it, err := src.Batches(p.Partition, 0)
	if err != nil {
		return err
	}
	defer it.Close()
	c := <-free
	put := func(key []byte, off int64) {
		c.add(key, off)
		if len(c.keys) >= chunkBytes {
			full <- c
			c = <-free
		}
	}
	defer func() { full <- c }()
	var read, nextReport int64
	nextReport = p.opts.ProgressBytes
	n := 0
	for it.Next() {
		b := it.Batch()
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		read += b.Origin.Size
		if p.opts.Progress != nil && read >= nextReport {
			p.opts.Progress(Progress{Phase: phase, Partition: p.Partition, Bytes: read})
			nextReport = read + p.opts.ProgressBytes
		}
		if b.BaseOffset >= limit {
			break
		}
		txnData := b.Magic >= 2 && b.Attributes.Transactional() && !b.Attributes.Control() && b.ProducerID >= 0
		if learn {
			p.learn(b)
		}
		if b.Attributes.Control() {
			if b.ProducerID >= 0 {
				switch controlType(b) {
				case controlCommit:
					if t := pending[b.ProducerID]; t != nil {
						for _, e := range t.ents {
							put(t.keys[e.from:e.to], e.off)
						}
					}
					delete(pending, b.ProducerID)
				case controlAbort:
					delete(pending, b.ProducerID)
				}
			}
			continue
		}
		if txnData && !learn && p.isAborted(b) {
			continue // the outcome is known from the first scan
		}
		if txnData && learn {
			t := pending[b.ProducerID]
			if t == nil {
				t = &pendingTxn{}
				pending[b.ProducerID] = t
			}
			for i := range b.Records {
				r := &b.Records[i]
				if r.Key != nil {
					from := len(t.keys)
					t.keys = append(t.keys, r.Key...)
					t.ents = append(t.ents, pendingRec{off: r.Offset, from: from, to: len(t.keys)})
				}
			}
			continue
		}
		for i := range b.Records {
			r := &b.Records[i]
			if r.Key != nil && r.Offset < limit {
				put(r.Key, r.Offset)
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if learn {
		p.inBytes = read
	}
	// Transactions still pending after the first scan are open at the end: their data lies at
	// or past the last stable offset and is never indexed. (The reindex scan does not defer:
	// it knows the aborted transactions, and a transaction that started below the limit and
	// committed past it has its data below the limit indexed directly, as Kafka's cleaner
	// does with the transaction index.)
	return nil
}

// learn updates producer and transaction state with batch b, as Kafka's producer state
// manager does on append.
func (p *Plan) learn(b *eventlog.Batch) {
	if b.Magic < 2 || b.ProducerID < 0 {
		return
	}
	pr := p.producers[b.ProducerID]
	if pr == nil {
		pr = &producer{epoch: b.ProducerEpoch, lastData: -1, txnFirst: -1}
		p.producers[b.ProducerID] = pr
	}
	if pr.epoch != b.ProducerEpoch {
		// A new epoch clears the batch metadata, so the last data offset is forgotten.
		pr.epoch = b.ProducerEpoch
		pr.lastData = -1
	}
	pr.lastTs = b.MaxTimestamp
	if b.Attributes.Control() {
		switch controlType(b) {
		case controlCommit, controlAbort:
			if pr.txnFirst < 0 {
				p.emptyTxn[b.BaseOffset] = true
			} else if controlType(b) == controlAbort {
				p.aborted[b.ProducerID] = append(p.aborted[b.ProducerID], span{pr.txnFirst, b.LastOffset})
			}
			pr.txnFirst = -1
		}
		return
	}
	if b.Attributes.Transactional() && pr.txnFirst < 0 {
		pr.txnFirst = b.BaseOffset
	}
	pr.lastData = b.LastOffset
}

// isAborted reports whether data batch b belongs to an aborted transaction.
func (p *Plan) isAborted(b *eventlog.Batch) bool {
	if !b.Attributes.Transactional() || b.ProducerID < 0 {
		return false
	}
	spans := p.aborted[b.ProducerID]
	i := sort.Search(len(spans), func(i int) bool { return spans[i].end >= b.LastOffset })
	return i < len(spans) && spans[i].first <= b.BaseOffset
}

// lastOfActiveProducer reports whether Kafka's cleaner would keep b, emptied, to preserve
// its producer's state: b is the producer's last data batch, or (when the producer has none in
// its epoch) a marker of its current epoch; and the producer has not expired at Now.
func (p *Plan) lastOfActiveProducer(b *eventlog.Batch) bool {
	if b.ProducerID < 0 {
		return false
	}
	pr := p.producers[b.ProducerID]
	if pr == nil {
		return false
	}
	if pr.txnFirst < 0 && p.opts.nowMs()-pr.lastTs >= p.opts.ProducerExpiration.Milliseconds() {
		return false
	}
	if pr.lastData >= 0 {
		return b.LastOffset == pr.lastData
	}
	return b.Attributes.Control() && b.ProducerEpoch == pr.epoch
}
