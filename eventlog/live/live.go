// Package live reads __consumer_offsets from a running Kafka cluster as an eventlog.Source, so
// that the replay engine (and every CLI built on it) reads a live cluster exactly as it reads
// segment files.
//
// It issues raw Fetch requests through a franz-go client (connection, TLS, SASL and version
// negotiation are the client's) with isolation level read_uncommitted, and decodes the record
// batches of the response itself. Fetch responses carry the log's batches as they are on disk,
// so a live read yields the same batches as the segment reader: base and last offsets, leader
// epoch, attributes (transactional, control, codec, delete horizon), CRC (verified), timestamps,
// producer id/epoch, base sequence, every record with its null-vs-empty key and value, and
// control records (COMMIT/ABORT markers), which the engine applies itself exactly as Kafka's
// coordinator loader does (the loader also reads uncommitted data).
//
// What a live read cannot know: the segment file and byte position of a batch (Origin.File is
// "kafka://<partition leader>/<topic>-<p>" and Origin.Pos the batch's byte position inside its
// fetch response, Origin.Size its size including the log-entry overhead), and batches of legacy
// message formats (magic 0/1, written by Kafka before 0.11), which it reports as an error.
// A fetch reads up to the high watermark, so an open transaction is seen as far as it is
// replicated (on one broker: everything written).
package live

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/eventlog"
)

// DefaultTopic is the topic Kafka's group coordinator writes.
const DefaultTopic = "__consumer_offsets"

// Options configure a Source.
type Options struct {
	// Topic is the topic to read (default __consumer_offsets).
	Topic string
	// FetchMaxBytes bounds one fetch response per partition (default 8 MiB; the broker still
	// returns a first batch larger than that whole).
	FetchMaxBytes int32
	// MaxBatchBytes bounds one batch (default 64 MiB), as the segment reader does.
	MaxBatchBytes int
}

// Source is a live __consumer_offsets read. Each iterator reads from its start offset up to
// the partition's high watermark as it was when the iterator was created, then ends; to follow
// a growing log, create a new iterator from where the last one ended.
type Source struct {
	cl    *kgo.Client
	ctx   context.Context
	opts  Options
	topic string
	id    [16]byte

	mu      sync.Mutex
	leaders map[int32]int32
	brokers map[int32]string
}

// Open connects with the given franz-go client options (seed brokers, TLS, SASL, ...) and
// reads the topic's metadata. ctx bounds every request of the source and its iterators.
func Open(ctx context.Context, clientOpts []kgo.Opt, opts Options) (*Source, error) {
	if opts.Topic == "" {
		opts.Topic = DefaultTopic
	}
	if opts.FetchMaxBytes <= 0 {
		opts.FetchMaxBytes = 8 << 20
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = 64 << 20
	}
	cl, err := kgo.NewClient(clientOpts...)
	if err != nil {
		return nil, err
	}
	s := &Source{cl: cl, ctx: ctx, opts: opts, topic: opts.Topic}
	if err := s.refreshMetadata(); err != nil {
		cl.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the client.
func (s *Source) Close() error {
	s.cl.Close()
	return nil
}

// Client is the underlying franz-go client.
func (s *Source) Client() *kgo.Client { return s.cl }

func (s *Source) refreshMetadata() error {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(s.topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(s.ctx, s.cl)
	if err != nil {
		return fmt.Errorf("metadata of %s: %w", s.topic, err)
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("metadata of %s: %d topics in the response", s.topic, len(resp.Topics))
	}
	rt := resp.Topics[0]
	if rt.ErrorCode != 0 {
		return fmt.Errorf("metadata of %s: %w", s.topic, kafkaError(rt.ErrorCode))
	}
	brokers := map[int32]string{}
	for _, b := range resp.Brokers {
		brokers[b.NodeID] = fmt.Sprintf("%s:%d", b.Host, b.Port)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id = rt.TopicID
	s.leaders = map[int32]int32{}
	for _, p := range rt.Partitions {
		s.leaders[p.Partition] = p.Leader
	}
	s.brokers = brokers
	return nil
}

// Partitions lists the topic's partitions.
func (s *Source) Partitions() ([]int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int32, 0, len(s.leaders))
	for p := range s.leaders {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func (s *Source) leader(p int32) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leaders[p]
	if !ok {
		return 0, fmt.Errorf("%s has no partition %d", s.topic, p)
	}
	if l < 0 {
		return 0, fmt.Errorf("%s-%d has no leader", s.topic, p)
	}
	return l, nil
}

// Offsets returns the partition's log start offset and its high watermark.
func (s *Source) Offsets(p int32) (first, next int64, err error) {
	if first, err = s.listOffset(p, -2); err != nil {
		return 0, 0, err
	}
	if next, err = s.listOffset(p, -1); err != nil {
		return 0, 0, err
	}
	return first, next, nil
}

func (s *Source) listOffset(p int32, ts int64) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = s.topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = p
	rp.CurrentLeaderEpoch = -1
	rp.Timestamp = ts
	t.Partitions = append(t.Partitions, rp)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(s.ctx, s.cl)
	if err != nil {
		return 0, fmt.Errorf("list offsets of %s-%d: %w", s.topic, p, err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.Partition != p {
				continue
			}
			if rp.ErrorCode != 0 {
				return 0, fmt.Errorf("list offsets of %s-%d: %w", s.topic, p, kafkaError(rp.ErrorCode))
			}
			return rp.Offset, nil
		}
	}
	return 0, fmt.Errorf("list offsets of %s-%d: no answer for the partition", s.topic, p)
}

// Batches iterates partition p from the batch holding offset from up to the high watermark
// as of this call.
func (s *Source) Batches(p int32, from int64) (eventlog.Iterator, error) {
	if _, err := s.leader(p); err != nil {
		return nil, err
	}
	_, end, err := s.Offsets(p)
	if err != nil {
		return nil, err
	}
	return &iter{s: s, p: p, next: from, end: end}, nil
}

// FetchError is a Kafka error code returned by a fetch.
type FetchError struct {
	Code int16
}

func (e *FetchError) Error() string {
	if name, ok := errorNames[e.Code]; ok {
		return fmt.Sprintf("Kafka error %d (%s)", e.Code, name)
	}
	return fmt.Sprintf("Kafka error %d", e.Code)
}

var errorNames = map[int16]string{
	1: "OFFSET_OUT_OF_RANGE", 3: "UNKNOWN_TOPIC_OR_PARTITION", 6: "NOT_LEADER_OR_FOLLOWER",
	29: "TOPIC_AUTHORIZATION_FAILED", 31: "CLUSTER_AUTHORIZATION_FAILED", 58: "SASL_AUTHENTICATION_FAILED",
	74: "FENCED_LEADER_EPOCH", 75: "UNKNOWN_LEADER_EPOCH", 100: "UNKNOWN_TOPIC_ID",
}

func kafkaError(code int16) error { return &FetchError{Code: code} }

type iter struct {
	s     *Source
	p     int32
	next  int64 // offset to fetch from
	end   int64 // high watermark when the iterator was created
	buf   []byte
	pos   int // position in buf
	bufAt string
	batch eventlog.Batch
	dec   kgo.Decompressor
	err   error
	done  bool
	fresh bool // buf was just fetched and nothing was decoded from it yet
}

func (it *iter) Batch() *eventlog.Batch { return &it.batch }
func (it *iter) Err() error             { return it.err }
func (it *iter) Close() error           { it.done, it.buf = true, nil; return nil }

func (it *iter) Next() bool {
	if it.done {
		return false
	}
	for {
		if it.pos < len(it.buf) {
			before := it.next
			ok, err := it.decode()
			if err != nil {
				it.err, it.done = err, true
				return false
			}
			if ok {
				return true
			}
			if it.fresh && it.next == before {
				it.err, it.done = fmt.Errorf("%s: the response holds no complete batch", it.bufAt), true
				return false
			}
			it.buf, it.pos = nil, 0 // the rest is a partial batch: fetch again from it.next
		}
		it.fresh = false
		if it.next >= it.end {
			it.done = true
			return false
		}
		if err := it.fetch(); err != nil {
			it.err, it.done = err, true
			return false
		}
	}
}

func (it *iter) fetch() error {
	s := it.s
	for attempt := 0; ; attempt++ {
		leader, err := s.leader(it.p)
		if err != nil {
			return err
		}
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 500
		req.MinBytes = 1
		req.MaxBytes = s.opts.FetchMaxBytes
		req.IsolationLevel = 0 // read_uncommitted: the coordinator loader applies markers itself
		req.SessionEpoch = -1  // no fetch session
		t := kmsg.NewFetchRequestTopic()
		t.Topic = s.topic
		t.TopicID = s.id
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition = it.p
		fp.CurrentLeaderEpoch = -1
		fp.FetchOffset = it.next
		fp.LastFetchedEpoch = -1
		fp.LogStartOffset = -1
		fp.PartitionMaxBytes = s.opts.FetchMaxBytes
		t.Partitions = append(t.Partitions, fp)
		req.Topics = append(req.Topics, t)
		resp, err := req.RequestWith(s.ctx, s.cl.Broker(int(leader)))
		if err != nil {
			return fmt.Errorf("fetch %s-%d at offset %d: %w", s.topic, it.p, it.next, err)
		}
		if resp.ErrorCode != 0 {
			return fmt.Errorf("fetch %s-%d at offset %d: %w", s.topic, it.p, it.next, kafkaError(resp.ErrorCode))
		}
		var rp *kmsg.FetchResponseTopicPartition
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				if resp.Topics[i].Partitions[j].Partition == it.p {
					rp = &resp.Topics[i].Partitions[j]
				}
			}
		}
		if rp == nil {
			return fmt.Errorf("fetch %s-%d at offset %d: no answer for the partition", s.topic, it.p, it.next)
		}
		switch rp.ErrorCode {
		case 0:
		case 6, 74, 75, 100, 3: // leadership or metadata moved: refresh and retry, bounded
			if attempt < 5 {
				if err := s.refreshMetadata(); err != nil {
					return err
				}
				select {
				case <-s.ctx.Done():
					return s.ctx.Err()
				case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
				}
				continue
			}
			fallthrough
		default:
			return fmt.Errorf("fetch %s-%d at offset %d: %w", s.topic, it.p, it.next, kafkaError(rp.ErrorCode))
		}
		if len(rp.RecordBatches) == 0 {
			if it.next >= rp.HighWatermark || it.next >= it.end {
				// Nothing below the watermark any more (e.g. the end moved back): stop here.
				it.end = it.next
				return nil
			}
			return fmt.Errorf("fetch %s-%d at offset %d: empty response below the high watermark %d", s.topic, it.p, it.next, rp.HighWatermark)
		}
		it.buf, it.pos, it.fresh = rp.RecordBatches, 0, true
		it.bufAt = fmt.Sprintf("kafka://%s/%s-%d@fetch(%d)", s.brokerAddr(leader), s.topic, it.p, it.next)
		return nil
	}
}

func (s *Source) brokerAddr(id int32) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.brokers[id]; ok {
		return a
	}
	return fmt.Sprintf("node-%d", id)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	logOverhead = 12
	v2HeaderLen = 61
)

// decode decodes the batch at it.pos. It returns false (no error) when the rest of the buffer
// is a partial batch, which a fetch may end with.
func (it *iter) decode() (bool, error) {
	for {
		rest := it.buf[it.pos:]
		if len(rest) < logOverhead+5 {
			return false, nil
		}
		base := int64(binary.BigEndian.Uint64(rest))
		length := int64(int32(binary.BigEndian.Uint32(rest[8:])))
		magic := int8(rest[16])
		size := logOverhead + length
		if int64(len(rest)) < size {
			return false, nil
		}
		where := fmt.Sprintf("%s+%d (offset %d)", it.bufAt, it.pos, base)
		if magic != 2 {
			return false, fmt.Errorf("%s: a magic %d (pre-0.11) message set; live reads support record batches (magic 2) only: copy the segment files instead", where, magic)
		}
		if length < v2HeaderLen-logOverhead || length > int64(it.s.opts.MaxBatchBytes) {
			return false, fmt.Errorf("%s: batch length %d out of range", where, length)
		}
		full := rest[:size]
		stored := binary.BigEndian.Uint32(full[17:])
		if got := crc32.Checksum(full[21:], castagnoli); got != stored {
			return false, fmt.Errorf("%s: CRC-32C stored %08x, computed %08x", where, stored, got)
		}
		count := int32(binary.BigEndian.Uint32(full[57:]))
		lastDelta := int64(int32(binary.BigEndian.Uint32(full[23:])))
		b := &it.batch
		*b = eventlog.Batch{
			Partition:            it.p,
			BaseOffset:           base,
			LastOffset:           base + lastDelta,
			PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(full[12:])),
			Magic:                2,
			CRC:                  stored,
			Attributes:           eventlog.Attributes(binary.BigEndian.Uint16(full[21:])),
			BaseTimestamp:        int64(binary.BigEndian.Uint64(full[27:])),
			MaxTimestamp:         int64(binary.BigEndian.Uint64(full[35:])),
			ProducerID:           int64(binary.BigEndian.Uint64(full[43:])),
			ProducerEpoch:        int16(binary.BigEndian.Uint16(full[51:])),
			BaseSequence:         int32(binary.BigEndian.Uint32(full[53:])),
			NumRecords:           count,
			Records:              b.Records[:0],
			Origin:               eventlog.Origin{File: it.bufAt, Pos: int64(it.pos), Size: size},
		}
		it.pos += int(size)
		if lastDelta < 0 || count < 0 || int64(count) > lastDelta+1 {
			return false, fmt.Errorf("%s: bad header: last offset delta %d, record count %d", where, lastDelta, count)
		}
		if b.LastOffset < it.next {
			it.fresh = false
			continue // a batch before the requested offset (a fetch returns whole batches)
		}
		it.next, it.fresh = b.LastOffset+1, false
		codec := b.Attributes.Codec()
		if !codec.Known() {
			return false, fmt.Errorf("%s: unknown compression codec %d", where, int(codec))
		}
		payload := full[v2HeaderLen:]
		if count > 0 && codec != eventlog.CodecNone {
			if it.dec == nil {
				it.dec = kgo.DefaultDecompressor()
			}
			var err error
			if payload, err = it.dec.Decompress(payload, kgo.CompressionCodecType(codec)); err != nil {
				return false, fmt.Errorf("%s: decompress (%s): %w", where, codec, err)
			}
		}
		if count > 0 || codec == eventlog.CodecNone {
			var err error
			if b.Records, err = eventlog.DecodeRecordsV2(b.Records, payload, int(count), base, b.BaseTimestamp); err != nil {
				return false, fmt.Errorf("%s: %w", where, err)
			}
		}
		return true, nil
	}
}

var _ eventlog.Source = (*Source)(nil)

// ErrNoBootstrap is returned by callers that need a bootstrap server and got none.
var ErrNoBootstrap = errors.New("no bootstrap server")
