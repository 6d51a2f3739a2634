package segment_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/internal/testgen"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/internal/hostile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll reads every batch of every partition, cloned.
func readAll(t *testing.T, src eventlog.Source, from int64) ([]*eventlog.Batch, error) {
	t.Helper()
	ps, err := src.Partitions()
	require.NoError(t, err)
	var out []*eventlog.Batch
	for _, p := range ps {
		it, err := src.Batches(p, from)
		require.NoError(t, err)
		for it.Next() {
			out = append(out, it.Batch().Clone())
		}
		err = it.Err()
		require.NoError(t, it.Close())
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// sameBatch compares everything but the CRC (computed by the writer) and the origin.
func sameBatch(t *testing.T, want, got *eventlog.Batch) {
	t.Helper()
	w, g := *want, *got
	w.CRC, g.CRC = 0, 0
	w.Origin, g.Origin = eventlog.Origin{}, eventlog.Origin{}
	if len(w.Records) == 0 {
		w.Records = nil
	}
	if len(g.Records) == 0 {
		g.Records = nil
	}
	require.Equal(t, w, g)
	for i := range want.Records {
		// require.Equal treats nil and empty slices as different, but be explicit about it.
		assert.Equal(t, want.Records[i].Value == nil, got.Records[i].Value == nil, "null value of record %d", i)
		assert.Equal(t, want.Records[i].Key == nil, got.Records[i].Key == nil, "null key of record %d", i)
	}
}

func partDir(t *testing.T) string {
	return filepath.Join(t.TempDir(), "__consumer_offsets-3")
}

func TestCodecRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codec eventlog.Codec
		raw   bool
	}{
		{"none", eventlog.CodecNone, false},
		{"gzip", eventlog.CodecGzip, false},
		{"snappy-xerial", eventlog.CodecSnappy, false},
		{"snappy-raw", eventlog.CodecSnappy, true},
		{"lz4", eventlog.CodecLZ4, false},
		{"zstd", eventlog.CodecZstd, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := partDir(t)
			a := eventlog.Attributes(tc.codec)
			txn := testgen.Batch(3, 100, 3, a|eventlog.AttrTransactional)
			txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence = 42, 5, 0
			ctrl := &eventlog.Batch{Partition: 3, BaseOffset: 103, LastOffset: 103, Magic: 2, Attributes: a | eventlog.AttrTransactional | eventlog.AttrControl,
				ProducerID: 42, ProducerEpoch: 5, BaseSequence: -1, BaseTimestamp: 9, MaxTimestamp: 9, NumRecords: 1,
				Records: []eventlog.Record{{Offset: 103, Timestamp: 9, Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 7}}}}
			horizon := testgen.Batch(3, 110, 4, a|eventlog.AttrDeleteHorizon)
			horizon.BaseTimestamp = 1_800_000_000_000 // the horizon, later than the record timestamps
			empty := &eventlog.Batch{Partition: 3, BaseOffset: 120, LastOffset: 124, Magic: 2, Attributes: a, ProducerID: 77, ProducerEpoch: 1, BaseSequence: 3}
			logAppend := testgen.Batch(3, 130, 1000, a|eventlog.AttrLogAppendTime)
			want := []*eventlog.Batch{testgen.Batch(3, 0, 50, a), txn, ctrl, horizon, empty, logAppend, testgen.Batch(3, 5000, 1, a)}
			require.NoError(t, testgen.WritePartition(dir, want, segment.WriterOptions{SegmentBytes: 4096, EncodeOptions: segment.EncodeOptions{RawSnappy: tc.raw}}))
			files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			require.Greater(t, len(files), 1, "the writer rolls files")

			r, err := segment.Open(dir, segment.Options{})
			require.NoError(t, err)
			got, err := readAll(t, r, 0)
			require.NoError(t, err)
			require.Len(t, got, len(want))
			for i := range want {
				sameBatch(t, want[i], got[i])
				assert.Equal(t, tc.codec, got[i].Attributes.Codec())
			}
			h, ok := got[3].DeleteHorizon()
			assert.True(t, ok)
			assert.EqualValues(t, 1_800_000_000_000, h)
			assert.True(t, got[2].Attributes.Control())
			assert.Equal(t, eventlog.LogAppendTime, got[5].Attributes.TimestampType())

			first, next, err := r.Offsets(3)
			require.NoError(t, err)
			assert.EqualValues(t, 0, first)
			assert.EqualValues(t, 5001, next)

			// From an offset inside a batch: that batch whole; from a gap: the next batch.
			for _, c := range []struct{ from, base int64 }{{0, 0}, {49, 0}, {50, 100}, {101, 100}, {104, 110}, {122, 120}, {600, 130}, {1200, 5000}} {
				it, err := r.Batches(3, c.from)
				require.NoError(t, err)
				require.True(t, it.Next(), "from %d", c.from)
				assert.Equal(t, c.base, it.Batch().BaseOffset, "from %d", c.from)
				require.NoError(t, it.Close())
			}
			it, err := r.Batches(3, 5001)
			require.NoError(t, err)
			assert.False(t, it.Next())
			require.NoError(t, it.Err())
			require.NoError(t, it.Close())
		})
	}
}

func TestLegacy(t *testing.T) {
	for _, magic := range []int8{0, 1} {
		for _, codec := range []eventlog.Codec{eventlog.CodecNone, eventlog.CodecGzip, eventlog.CodecSnappy, eventlog.CodecLZ4} {
			t.Run(string(rune('0'+magic))+"-"+codec.String(), func(t *testing.T) {
				recs := testgen.Batch(0, 10, 6, 0).Records
				for i := range recs {
					recs[i].Headers = nil
					if magic == 0 {
						recs[i].Timestamp = -1
					}
				}
				raw, err := segment.AppendLegacy(nil, magic, codec, eventlog.CreateTime, recs[:3])
				require.NoError(t, err)
				raw, err = segment.AppendLegacy(raw, magic, codec, eventlog.CreateTime, recs[3:])
				require.NoError(t, err)
				dir := partDir(t)
				require.NoError(t, os.MkdirAll(dir, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, segment.FileName(10)), raw, 0o644))
				r, err := segment.Open(dir, segment.Options{})
				require.NoError(t, err)
				got, err := readAll(t, r, 0)
				require.NoError(t, err)
				var all []eventlog.Record
				for _, b := range got {
					assert.Equal(t, magic, b.Magic)
					assert.Equal(t, codec, b.Attributes.Codec())
					assert.EqualValues(t, -1, b.ProducerID)
					assert.Equal(t, b.Records[len(b.Records)-1].Offset, b.LastOffset)
					all = append(all, b.Records...)
				}
				if codec == eventlog.CodecNone {
					assert.Len(t, got, 6)
				} else {
					assert.Len(t, got, 2)
				}
				require.Equal(t, recs, all)
			})
		}
	}
}

func TestLegacyLogAppendTime(t *testing.T) {
	recs := testgen.Batch(0, 0, 3, 0).Records
	for i := range recs {
		recs[i].Headers = nil
	}
	raw, err := segment.AppendLegacy(nil, 1, eventlog.CodecGzip, eventlog.LogAppendTime, recs)
	require.NoError(t, err)
	dir := partDir(t)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, segment.FileName(0)), raw, 0o644))
	r, err := segment.Open(dir, segment.Options{})
	require.NoError(t, err)
	got, err := readAll(t, r, 0)
	require.NoError(t, err)
	for _, rec := range got[0].Records {
		assert.Equal(t, recs[2].Timestamp, rec.Timestamp, "inner records take the wrapper's log-append time")
	}
}

func TestTransientFilesAndLogDir(t *testing.T) {
	root := t.TempDir()
	for p := 0; p < 3; p++ {
		dir := filepath.Join(root, "__consumer_offsets-"+string(rune('0'+p)))
		require.NoError(t, testgen.WritePartition(dir, []*eventlog.Batch{testgen.Batch(int32(p), 0, 5, 0)}, segment.WriterOptions{}))
	}
	d0 := filepath.Join(root, "__consumer_offsets-0")
	for _, name := range []string{"00000000000000000005.log.cleaned", "00000000000000000005.log.swap", "00000000000000000000.log.deleted", "00000000000000000000.index"} {
		require.NoError(t, os.WriteFile(filepath.Join(d0, name), []byte("junk"), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "orders-0"), 0o755))
	r, err := segment.Open(root, segment.Options{})
	require.NoError(t, err)
	ps, _ := r.Partitions()
	assert.Equal(t, []int32{0, 1, 2}, ps)
	assert.Len(t, r.Report().Warnings(), 3)
	got, err := readAll(t, r, 0)
	require.NoError(t, err)
	assert.Len(t, got, 3)
	assert.Empty(t, r.Report().Problems())
}

// damage writes three good batches (offsets 0-4, 5-9, 10-14) into one file, applies f to the
// bytes, and returns the partition dir and the byte positions of the three batches.
func damage(t *testing.T, codec eventlog.Codec, f func(raw []byte, pos [3]int) []byte) (string, [3]int) {
	t.Helper()
	enc := segment.NewEncoder(segment.EncodeOptions{})
	defer enc.Close()
	var raw []byte
	var pos [3]int
	for i := range 3 {
		pos[i] = len(raw)
		var err error
		raw, err = enc.AppendBatch(raw, testgen.Batch(3, int64(5*i), 5, eventlog.Attributes(codec)))
		require.NoError(t, err)
	}
	raw = f(raw, pos)
	dir := partDir(t)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, segment.FileName(0)), raw, 0o644))
	return dir, pos
}

func TestBadInput(t *testing.T) {
	type want struct {
		kind      eventlog.Kind
		pos       int // index into the batch positions, or -1 for "right after batch 1"
		offset    int64
		bases     []int64 // batches read in forensic mode
		skipBytes func(raw int, pos [3]int) int64
	}
	fileLen := 0
	for _, tc := range []struct {
		name  string
		codec eventlog.Codec
		f     func(raw []byte, pos [3]int) []byte
		want  want
	}{
		{"truncated-tail", eventlog.CodecNone, func(raw []byte, pos [3]int) []byte { fileLen = len(raw) - 10; return raw[:len(raw)-10] },
			want{eventlog.KindTruncated, 2, 10, []int64{0, 5}, func(_ int, pos [3]int) int64 { return int64(fileLen - pos[2]) }}},
		{"truncated-header", eventlog.CodecNone, func(raw []byte, pos [3]int) []byte { fileLen = pos[2] + 30; return raw[:pos[2]+30] },
			want{eventlog.KindTruncated, 2, 10, []int64{0, 5}, func(_ int, pos [3]int) int64 { return int64(fileLen - pos[2]) }}},
		{"bad-crc", eventlog.CodecGzip, func(raw []byte, pos [3]int) []byte { raw[pos[1]+70] ^= 0xff; return raw },
			want{eventlog.KindBadCRC, 1, 5, []int64{0, 10}, func(_ int, pos [3]int) int64 { return int64(pos[2] - pos[1]) }}},
		{"length-past-eof", eventlog.CodecNone, func(raw []byte, pos [3]int) []byte {
			binary.BigEndian.PutUint32(raw[pos[1]+8:], uint32(len(raw)-pos[1])) // 12 bytes too long
			return raw
		}, want{eventlog.KindTruncated, 1, 5, []int64{0, 10}, func(_ int, pos [3]int) int64 { return int64(pos[2] - pos[1]) }}},
		{"garbage-between", eventlog.CodecNone, func(raw []byte, pos [3]int) []byte {
			g := []byte("this is not a batch at all, just some garbage bytes\x07\x07\x07")
			return append(append(append([]byte{}, raw[:pos[2]]...), g...), raw[pos[2]:]...)
		}, want{eventlog.KindBadMagic, 2, -1, []int64{0, 5, 10}, func(_ int, pos [3]int) int64 { return 54 }}},
		{"garbage-tail", eventlog.CodecNone, func(raw []byte, pos [3]int) []byte { return append(raw, append(make([]byte, 99), 7)...) },
			want{eventlog.KindBadLength, -1, -1, []int64{0, 5, 10}, func(raw int, pos [3]int) int64 { return 100 }}},
		{"unknown-codec", eventlog.CodecNone, func(raw []byte, pos [3]int) []byte { return setAttrs(raw, pos[1], 6) },
			want{eventlog.KindUnknownCodec, 1, 5, []int64{0, 10}, func(_ int, pos [3]int) int64 { return int64(pos[2] - pos[1]) }}},
		{"bad-compressed-payload", eventlog.CodecZstd, func(raw []byte, pos [3]int) []byte {
			raw[pos[1]+65] ^= 0xff
			return fixCRC(raw, pos[1])
		}, want{eventlog.KindDecompress, 1, 5, []int64{0, 10}, func(_ int, pos [3]int) int64 { return int64(pos[2] - pos[1]) }}},
		{"record-varint-past-batch", eventlog.CodecNone, func(raw []byte, pos [3]int) []byte {
			raw[pos[1]+61] = 0x7e // first record claims 63 bytes... more than its batch holds after count tweak
			binary.BigEndian.PutUint32(raw[pos[1]+57:], 5)
			raw[pos[1]+61] = 0xfe // varint length 0x7ffffff...: runs past the batch
			raw[pos[1]+62] = 0xff
			raw[pos[1]+63] = 0x7f
			return fixCRC(raw, pos[1])
		}, want{eventlog.KindBadRecord, 1, 5, []int64{0, 10}, func(_ int, pos [3]int) int64 { return int64(pos[2] - pos[1]) }}},
		{"record-count-mismatch", eventlog.CodecNone, func(raw []byte, pos [3]int) []byte {
			binary.BigEndian.PutUint32(raw[pos[1]+57:], 4)
			return fixCRC(raw, pos[1])
		}, want{eventlog.KindBadRecord, 1, 5, []int64{0, 10}, func(_ int, pos [3]int) int64 { return int64(pos[2] - pos[1]) }}},
		{"offset-order", eventlog.CodecNone, func(raw []byte, pos [3]int) []byte {
			binary.BigEndian.PutUint64(raw[pos[2]:], 2) // batch 3 claims to start at 2
			return raw
		}, want{eventlog.KindOffsetOrder, 2, 2, []int64{0, 5}, func(raw int, pos [3]int) int64 { return int64(raw - pos[2]) }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, pos := damage(t, tc.codec, tc.f)
			st, err := os.Stat(filepath.Join(dir, segment.FileName(0)))
			require.NoError(t, err)
			wantPos := int64(0)
			if tc.want.pos >= 0 {
				wantPos = int64(pos[tc.want.pos])
			} else {
				wantPos = st.Size() - 100
			}

			r, err := segment.Open(dir, segment.Options{})
			require.NoError(t, err)
			got, err := readAll(t, r, 0)
			var p *eventlog.Problem
			require.ErrorAs(t, err, &p, "strict mode fails")
			assert.Equal(t, tc.want.kind, p.Kind)
			assert.Equal(t, wantPos, p.Pos)
			assert.Equal(t, tc.want.offset, p.Offset)
			assert.Contains(t, p.Error(), filepath.Join(dir, segment.FileName(0)))
			strictCount := tc.want.pos
			if strictCount < 0 {
				strictCount = 3
			}
			assert.Len(t, got, strictCount, "batches before the bad one are returned")

			r, err = segment.Open(dir, segment.Options{Mode: eventlog.Forensic})
			require.NoError(t, err)
			got, err = readAll(t, r, 0)
			require.NoError(t, err, "forensic mode continues")
			var bases []int64
			for _, b := range got {
				bases = append(bases, b.BaseOffset)
			}
			assert.Equal(t, tc.want.bases, bases)
			probs := r.Report().Problems()
			require.Len(t, probs, 1)
			assert.Equal(t, tc.want.kind, probs[0].Kind)
			assert.Equal(t, wantPos, probs[0].Pos)
			assert.Equal(t, tc.want.skipBytes(int(st.Size()), pos), probs[0].SkippedBytes)
			sum := r.Report().Summary()
			assert.EqualValues(t, 1, sum[tc.want.kind].Problems)
		})
	}
}

func setAttrs(raw []byte, pos int, codec byte) []byte {
	raw[pos+22] = raw[pos+22]&^7 | codec
	return fixCRC(raw, pos)
}

// fixCRC recomputes the CRC of the batch at pos, so that damage past the CRC check is exercised.
func fixCRC(raw []byte, pos int) []byte {
	n := int(binary.BigEndian.Uint32(raw[pos+8:]))
	binary.BigEndian.PutUint32(raw[pos+17:], crc32c(raw[pos+21:pos+12+n]))
	return raw
}

func TestMaxBatchMemory(t *testing.T) {
	dir := partDir(t)
	require.NoError(t, testgen.WritePartition(dir, []*eventlog.Batch{testgen.Batch(3, 0, 2000, eventlog.Attributes(eventlog.CodecZstd))}, segment.WriterOptions{}))
	for _, c := range []struct {
		limit int
		why   string
	}{
		{10000, "its 2000 declared records take 176000 bytes as decoded records"},
		{200000, "its 2000 records take 176000 bytes and its zstd payload decompresses past the 24000 bytes left"},
	} {
		r, err := segment.Open(dir, segment.Options{MaxBatchMemory: c.limit})
		require.NoError(t, err)
		_, err = readAll(t, r, 0)
		var p *eventlog.Problem
		require.True(t, errors.As(err, &p))
		assert.Equal(t, eventlog.KindTooLarge, p.Kind)
		assert.Contains(t, p.Detail, c.why)
		assert.Contains(t, p.Detail, "raise the limit (--max-batch-memory)")
	}
	r, err := segment.Open(dir, segment.Options{MaxBatchMemory: 400000})
	require.NoError(t, err)
	got, err := readAll(t, r, 0)
	require.NoError(t, err)
	require.Len(t, got[0].Records, 2000)
}

// A batch declaring more records than its bytes can hold is refused before its records are
// allocated.
func TestRecordCountAgainstBytes(t *testing.T) {
	dir, _ := damage(t, eventlog.CodecGzip, func(raw []byte, pos [3]int) []byte {
		binary.BigEndian.PutUint32(raw[pos[1]+23:], 999_999) // last offset delta
		binary.BigEndian.PutUint32(raw[pos[1]+57:], 1_000_000)
		return fixCRC(raw, pos[1])
	})
	r, err := segment.Open(dir, segment.Options{})
	require.NoError(t, err)
	_, err = readAll(t, r, 0)
	var p *eventlog.Problem
	require.ErrorAs(t, err, &p)
	assert.Equal(t, eventlog.KindBadRecord, p.Kind)
	assert.Contains(t, p.Detail, "the header declares 1000000 records, but the")
}

// Record-count bombs (issue 13, defect 5): a gzip batch of a few KB holding hundreds of
// thousands of 7-byte records decodes within the limit; one of millions is refused before its
// records are allocated, and forensic mode skips it whole.
func TestRecordCountBomb(t *testing.T) {
	for _, c := range []struct {
		records int
		refused bool
	}{{600_000, false}, {8_000_000, true}} {
		raw, err := hostile.RecordBomb(c.records, nil)
		require.NoError(t, err)
		require.Less(t, len(raw), 100_000)
		dir := partDir(t)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, segment.FileName(0)), raw, 0o644))
		r, err := segment.Open(dir, segment.Options{})
		require.NoError(t, err)
		it, err := r.Batches(3, 0)
		require.NoError(t, err)
		if !c.refused {
			require.True(t, it.Next())
			require.Len(t, it.Batch().Records, c.records)
			require.NoError(t, it.Close())
			continue
		}
		require.False(t, it.Next())
		var p *eventlog.Problem
		require.ErrorAs(t, it.Err(), &p)
		assert.Equal(t, eventlog.KindTooLarge, p.Kind)
		assert.Contains(t, p.Detail, "its 8000000 declared records take 671.4 MiB as decoded records")
		require.NoError(t, it.Close())

		r, err = segment.Open(dir, segment.Options{Mode: eventlog.Forensic})
		require.NoError(t, err)
		got, err := readAll(t, r, 0)
		require.NoError(t, err)
		assert.Empty(t, got)
		assert.EqualValues(t, c.records, r.Report().Summary()[eventlog.KindTooLarge].Records)
	}
}

// TestBatchesFromInsideHalfSwappedSegments: reading from an offset inside the range that a
// stale segment shares with the cleaned output before it gives the same batches as reading the
// partition from 0 and skipping to that offset (the real corpus has such a directory).
func TestBatchesFromInsideHalfSwappedSegments(t *testing.T) {
	dir := "../../../shared/fixtures-found/LestFeeD-online-shop-user/kafka/data/__consumer_offsets-45"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("corpus partition %s not present: %v", dir, err)
	}
	r, err := segment.Open(dir, segment.Options{})
	if err != nil {
		t.Fatal(err)
	}
	collect := func(from int64) []int64 {
		it, err := r.Batches(45, from)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		var offs []int64
		for it.Next() {
			if b := it.Batch(); b.LastOffset >= from {
				offs = append(offs, b.BaseOffset)
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		return offs
	}
	all := collect(0)
	for _, from := range []int64{36, 40, 100, 300, 506} {
		var want []int64
		for i, base := range all {
			// the batch containing from, and every later one
			if base >= from || i+1 < len(all) && all[i+1] > from {
				want = append(want, base)
			}
		}
		assert.Equal(t, want, collect(from), "from %d", from)
	}
}
