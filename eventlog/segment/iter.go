package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"

	"github.com/coordlog/coordlog/eventlog"
)

func (it *iter) Batch() *eventlog.Batch { return &it.batch }
func (it *iter) Err() error             { return it.err }

func (it *iter) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	it.dec.close()
	it.w.buf = nil
	return it.closeFile()
}

func (it *iter) closeFile() error {
	if it.f == nil {
		return nil
	}
	err := it.f.Close()
	it.f = nil
	it.w = window{buf: it.w.buf}
	return err
}

func (it *iter) openFile() error {
	f, err := os.Open(it.files[it.fi].path)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	it.f = f
	it.w = window{f: f, buf: it.w.buf, size: st.Size()}
	it.pos = 0
	it.fileAccepted = false
	return nil
}

func (it *iter) Next() bool {
	for {
		if it.err != nil || it.closed {
			return false
		}
		if it.f == nil {
			if it.fi >= len(it.files) {
				return false
			}
			if err := it.openFile(); err != nil {
				it.err = err
				return false
			}
		}
		if it.pos >= it.w.size {
			if err := it.closeFile(); err != nil {
				it.err = err
				return false
			}
			it.fi++
			continue
		}
		if zero, err := it.zeroTail(it.pos); err != nil {
			it.err = err
			return false
		} else if zero {
			it.pos = it.w.size
			continue
		}
		size, b, err := it.decodeAt(it.pos)
		if err != nil { // I/O error, not damage: never skipped
			it.err = err
			return false
		}
		if fileBase := it.files[it.fi].base; b == nil && it.batch.LastOffset < fileBase {
			b = &bad{kind: eventlog.KindBelowBase, offset: it.batch.BaseOffset, trusted: true, size: size,
				declared: int64(it.batch.NumRecords),
				detail: fmt.Sprintf("batch [%d..%d] lies below the file's base offset %d (its name): the segment files were renamed or mixed up, and Kafka's log recovery rejects such a segment; "+
					"rename the file after its first batch's offset", it.batch.BaseOffset, it.batch.LastOffset, fileBase)}
		}
		if b == nil && it.batch.LastOffset < it.prevNext && !it.fileAccepted {
			p := &eventlog.Problem{Kind: eventlog.KindSuperseded, Partition: it.part, File: it.files[it.fi].path, Pos: it.pos, Offset: it.batch.BaseOffset,
				Detail:       fmt.Sprintf("batch [%d..%d] lies below offset %d reached by earlier segment files: superseded, skipped as Kafka's reads do", it.batch.BaseOffset, it.batch.LastOffset, it.prevNext),
				SkippedBytes: size, SkippedBatches: 1, SkippedRecords: int64(it.batch.NumRecords)}
			it.report.Add(*p)
			it.pos += size
			continue
		}
		if b == nil && it.batch.BaseOffset < it.prevNext {
			b = &bad{kind: eventlog.KindOffsetOrder, offset: it.batch.BaseOffset, trusted: true, size: size,
				declared: int64(it.batch.NumRecords),
				detail:   fmt.Sprintf("batch [%d..%d] starts below the end of the previous batch (next offset %d)", it.batch.BaseOffset, it.batch.LastOffset, it.prevNext)}
		}
		if b != nil {
			p := &eventlog.Problem{Kind: b.kind, Partition: it.part, File: it.files[it.fi].path, Pos: it.pos, Offset: b.offset, Detail: b.detail}
			if it.opts.Mode == eventlog.Strict {
				it.err = p
				return false
			}
			if err := it.resync(p, b); err != nil {
				it.err = err
				return false
			}
			continue
		}
		it.pos += size
		it.prevNext = it.batch.LastOffset + 1
		it.fileAccepted = true
		if it.batch.LastOffset < it.from {
			continue
		}
		return true
	}
}

// resync implements forensic mode's rule: after damage in a CRC-verified batch (unknown codec,
// undecompressable payload, bad record, impossible header, offset order) skip exactly that
// batch; after damage that makes the framing untrustworthy (bad CRC, bad length, bad magic,
// truncation) scan forward byte by byte for the next position holding a plausible batch whose
// CRC matches, or skip to the end of the file when there is none.
func (it *iter) resync(p *eventlog.Problem, b *bad) error {
	if b.declared > 0 {
		p.SkippedRecords = b.declared
	}
	if b.offset >= 0 {
		p.SkippedBatches = 1
	}
	if b.trusted {
		p.SkippedBytes = b.size
		it.pos += b.size
		it.report.Add(*p)
		return nil
	}
	q, err := it.scan(it.pos + 1)
	if err != nil {
		return err
	}
	p.SkippedBytes = q - it.pos
	it.pos = q
	it.report.Add(*p)
	return nil
}

// scan returns the first position >= start where a batch with a plausible header and a
// matching CRC starts, or the file size.
func (it *iter) scan(start int64) (int64, error) {
	size := it.w.size
	for q := start; q+17 <= size; q++ {
		h, err := it.w.at(q, 17)
		if err != nil {
			return 0, err
		}
		magic := h[16]
		if magic > 2 || int64(binary.BigEndian.Uint64(h)) < 0 {
			continue
		}
		length := int64(int32(binary.BigEndian.Uint32(h[8:])))
		minLen := int64(v2HeaderLen - logOverhead)
		if magic < 2 {
			minLen = legacyMinSize(int8(magic))
		}
		if length < minLen || length > int64(it.opts.MaxBatchBytes) || q+logOverhead+length > size {
			continue
		}
		full, err := it.w.at(q, int(logOverhead+length))
		if err != nil {
			return 0, err
		}
		if magic == 2 {
			if crc32.Checksum(full[21:], castagnoli) == binary.BigEndian.Uint32(full[17:]) {
				return q, nil
			}
		} else if crc32.ChecksumIEEE(full[16:]) == binary.BigEndian.Uint32(full[12:]) {
			return q, nil
		}
	}
	return size, nil
}

// zeroTail reports whether the bytes from pos to the end of the file are all zero and there
// are enough of them to be no batch: the unwritten end of a preallocated segment. Kafka
// preallocates segment files when log.preallocate is set and trims them when a segment is
// closed; after an unclean stop the active segment keeps its zero tail, which Kafka's reader
// meets as a "record size 0" entry and its log recovery (LogSegment.recover) truncates. The
// reader says so once per file (a warning, not damage) and ends the file there. Zero bytes
// followed by anything else are damage like any other garbage.
func (it *iter) zeroTail(pos int64) (bool, error) {
	const header = 17 // offset, length and the bytes up to the magic
	if it.w.size-pos < header {
		return false, nil
	}
	// The header first (a batch's is never all zero), from the window as decodeAt reads it.
	h, err := it.w.at(pos, header)
	if err != nil {
		return false, err
	}
	for _, c := range h {
		if c != 0 {
			return false, nil
		}
	}
	for q := pos; q < it.w.size; {
		n := int(min(int64(windowSize), it.w.size-q))
		chunk, err := it.w.at(q, n)
		if err != nil {
			return false, err
		}
		for _, c := range chunk {
			if c != 0 {
				return false, nil
			}
		}
		if q == pos && it.headersOnly {
			break // probes only need to know no batch starts here
		}
		q += int64(n)
	}
	if it.reader != nil {
		f := it.files[it.fi].path
		it.reader.warnOnce(f+"#zero-tail", "%s: %d zero bytes from byte %d to the end: the unwritten tail of a preallocated segment (log.preallocate; Kafka's log recovery truncates it), ignored",
			f, it.w.size-pos, pos)
	}
	return true, nil
}

// decodeAt decodes the batch at pos into it.batch. It returns the batch's size on disk, or a
// *bad describing damage, or an I/O error.
func (it *iter) decodeAt(pos int64) (int64, *bad, error) {
	remaining := it.w.size - pos
	if remaining < 17 {
		return 0, &bad{kind: eventlog.KindTruncated, offset: -1, declared: -1,
			detail: fmt.Sprintf("%d bytes left, fewer than a batch header", remaining)}, nil
	}
	h, err := it.w.at(pos, int(min(remaining, v2HeaderLen)))
	if err != nil {
		return 0, nil, err
	}
	baseOffset := int64(binary.BigEndian.Uint64(h))
	length := int64(int32(binary.BigEndian.Uint32(h[8:])))
	magic := h[16]
	if baseOffset == 0 && length == 0 && magic == 0 {
		return 0, &bad{kind: eventlog.KindBadLength, offset: -1, declared: -1,
			detail: "zero bytes where a batch should start, and other bytes after them (so not the zero tail of a preallocated segment)"}, nil
	}
	switch magic {
	case 2:
		return it.decodeV2(pos, remaining, h, baseOffset, length)
	case 0, 1:
		return it.decodeLegacy(pos, remaining, baseOffset, length, int8(magic))
	}
	return 0, &bad{kind: eventlog.KindBadMagic, offset: -1, declared: -1,
		detail: fmt.Sprintf("magic byte %d (garbage where a batch should start)", magic)}, nil
}

func (it *iter) decodeV2(pos, remaining int64, h []byte, baseOffset, length int64) (int64, *bad, error) {
	declared := int64(-1)
	if len(h) >= v2HeaderLen {
		declared = int64(int32(binary.BigEndian.Uint32(h[57:])))
	}
	if length < v2HeaderLen-logOverhead || length > int64(it.opts.MaxBatchBytes) {
		return 0, &bad{kind: eventlog.KindBadLength, offset: baseOffset, declared: declared,
			detail: fmt.Sprintf("batch length %d outside [%d, %d]", length, v2HeaderLen-logOverhead, it.opts.MaxBatchBytes)}, nil
	}
	size := logOverhead + length
	if size > remaining {
		return 0, &bad{kind: eventlog.KindTruncated, offset: baseOffset, declared: declared,
			detail: fmt.Sprintf("batch of %d bytes but only %d left in the file", size, remaining)}, nil
	}
	full, err := it.w.at(pos, int(size))
	if err != nil {
		return 0, nil, err
	}
	stored := binary.BigEndian.Uint32(full[17:])
	if got := crc32.Checksum(full[21:], castagnoli); got != stored {
		return 0, &bad{kind: eventlog.KindBadCRC, offset: baseOffset, declared: declared,
			detail: fmt.Sprintf("CRC-32C stored %08x, computed %08x", stored, got)}, nil
	}
	b := &it.batch
	*b = eventlog.Batch{
		Partition:            it.part,
		BaseOffset:           baseOffset,
		PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(full[12:])),
		Magic:                2,
		CRC:                  stored,
		Attributes:           eventlog.Attributes(binary.BigEndian.Uint16(full[21:])),
		BaseTimestamp:        int64(binary.BigEndian.Uint64(full[27:])),
		MaxTimestamp:         int64(binary.BigEndian.Uint64(full[35:])),
		ProducerID:           int64(binary.BigEndian.Uint64(full[43:])),
		ProducerEpoch:        int16(binary.BigEndian.Uint16(full[51:])),
		BaseSequence:         int32(binary.BigEndian.Uint32(full[53:])),
		NumRecords:           int32(declared),
		Records:              b.Records[:0],
		Origin:               eventlog.Origin{File: it.files[it.fi].path, Pos: pos, Size: size},
	}
	lastDelta := int64(int32(binary.BigEndian.Uint32(full[23:])))
	b.LastOffset = baseOffset + lastDelta
	trusted := func(kind eventlog.Kind, format string, args ...any) (int64, *bad, error) {
		return 0, &bad{kind: kind, offset: baseOffset, declared: declared, trusted: true, size: size, detail: fmt.Sprintf(format, args...)}, nil
	}
	if lastDelta < 0 || declared < 0 || baseOffset < 0 || declared > lastDelta+1 {
		return trusted(eventlog.KindBadHeader, "base offset %d, last offset delta %d, record count %d", baseOffset, lastDelta, declared)
	}
	codec := b.Attributes.Codec()
	if !codec.Known() {
		return trusted(eventlog.KindUnknownCodec, "compression codec %d", int(codec))
	}
	if it.headersOnly || b.LastOffset < it.from {
		return size, nil, nil
	}
	payload := full[v2HeaderLen:]
	if declared == 0 && codec != eventlog.CodecNone {
		return size, nil, nil // a header-only batch; its payload, if any, is an empty compressed stream
	}
	// Memory: the records' structs are reserved from the declared count before anything is
	// decompressed or allocated, the payload may take the rest, and the count is checked
	// against the bytes that hold the records before the structs are allocated.
	budget := int64(it.opts.MaxBatchMemory)
	recordMem := declared * eventlog.RecordMemory
	if recordMem > budget {
		return trusted(eventlog.KindTooLarge, "%s", it.tooLarge(fmt.Sprintf("its %d declared records take %s as decoded records", declared, mib(recordMem))))
	}
	if codec != eventlog.CodecNone {
		it.dec.limit = int(budget - recordMem)
		if payload, err = it.dec.decompress(codec, payload); errors.Is(err, errTooLarge) {
			return trusted(eventlog.KindTooLarge, "%s", it.tooLarge(fmt.Sprintf("its %d records take %s and its %s payload decompresses past the %s left",
				declared, mib(recordMem), codec, mib(budget-recordMem))))
		} else if err != nil {
			return trusted(eventlog.KindDecompress, "%v", err)
		}
	}
	if most := int64(len(payload)) / eventlog.MinRecordSizeV2; declared > most {
		return trusted(eventlog.KindBadRecord, "the header declares %d records, but the %d bytes of records hold at most %d (%d bytes each at least)",
			declared, len(payload), most, eventlog.MinRecordSizeV2)
	}
	b.Records = slices.Grow(b.Records[:0], int(declared))
	maxHeaders := (budget - recordMem - int64(len(payload))) / eventlog.HeaderMemory
	if b.Records, err = eventlog.DecodeRecordsV2Bounded(b.Records, payload, int(declared), baseOffset, b.BaseTimestamp, int(maxHeaders)); errors.Is(err, eventlog.ErrTooManyHeaders) {
		return trusted(eventlog.KindTooLarge, "%s", it.tooLarge(err.Error()))
	} else if err != nil {
		return trusted(eventlog.KindBadRecord, "%v", err)
	}
	return size, nil, nil
}

// tooLarge says why a batch is past Options.MaxBatchMemory and what to do.
func (it *iter) tooLarge(why string) string {
	return fmt.Sprintf("decoded, this batch would take more than the per-batch memory limit of %s: %s. "+
		"No batch a Kafka coordinator writes comes near it (brokers refuse batches over max.message.bytes, 1 MiB by default): this one is damaged or crafted. "+
		"If it is real, raise the limit (--max-batch-memory)", mib(int64(it.opts.MaxBatchMemory)), why)
}

// mib renders a byte count in MiB for messages.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
