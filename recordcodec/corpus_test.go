package recordcodec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// foundCorpus is the folder of real __consumer_offsets segments beside the project. The files
// are read from there and never copied into the repository.
const foundCorpus = "../../shared/fixtures-found"

func corpusFiles(t testing.TB) []string {
	t.Helper()
	if _, err := os.Stat(foundCorpus); err != nil {
		t.Skipf("real segment corpus %s not present: %v", foundCorpus, err)
	}
	var files []string
	err := filepath.WalkDir(foundCorpus, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".log") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

type rawRecord struct {
	file       string
	offset     int64
	control    bool
	key, value []byte
}

// walkSegment yields the records of an uncompressed v2 segment, the only kind the corpus holds
// (its PROVENANCE.md checks this). Segment reading proper lives in package eventlog; this walk
// is independent of it on purpose.
func walkSegment(t testing.TB, path string, fn func(rawRecord)) (batches int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for pos := 0; pos < len(data); {
		if len(data)-pos < 12 {
			t.Fatalf("%s: %d trailing bytes at %d", path, len(data)-pos, pos)
		}
		size := 12 + int(binary.BigEndian.Uint32(data[pos+8:]))
		var b kmsg.RecordBatch
		if err := b.ReadFrom(data[pos : pos+size]); err != nil {
			t.Fatalf("%s: batch at byte %d: %v", path, pos, err)
		}
		if b.Magic != 2 || b.Attributes&0x7 != 0 {
			t.Fatalf("%s: batch at byte %d: magic %d attributes %#x not handled by this walk", path, pos, b.Magic, b.Attributes)
		}
		recs := b.Records
		for i := int32(0); i < b.NumRecords; i++ {
			l, n := binary.Varint(recs)
			if n <= 0 {
				t.Fatalf("%s: batch at byte %d: bad record length", path, pos)
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:n+int(l)]); err != nil {
				t.Fatalf("%s: batch at byte %d record %d: %v", path, pos, i, err)
			}
			fn(rawRecord{file: path, offset: b.FirstOffset + int64(r.OffsetDelta), control: b.Attributes&0x20 != 0, key: r.Key, value: r.Value})
			recs = recs[n+int(l):]
		}
		batches++
		pos += size
	}
	return batches
}

// TestFoundCorpusRoundTrip decodes every record of every real segment and re-encodes it to the
// same bytes.
func TestFoundCorpusRoundTrip(t *testing.T) {
	files := corpusFiles(t)
	counts := map[string]int{}
	var total, totalBytes, batches int
	for _, f := range files {
		st, _ := os.Stat(f)
		totalBytes += int(st.Size())
		batches += walkSegment(t, f, func(rr rawRecord) {
			total++
			if rr.control {
				t.Errorf("%s offset %d: unexpected control record", rr.file, rr.offset)
				return
			}
			rec, err := Decode(rr.key, rr.value)
			if err != nil {
				t.Errorf("%s offset %d: %v", rr.file, rr.offset, err)
				return
			}
			if ov, ok := rec.Value.(*OffsetCommitValue); ok {
				// The replay hot path decodes these without the general reader: same result.
				var fast OffsetCommitValue
				if !fast.decodeFast(rr.value, false) || !reflect.DeepEqual(fast, *ov) {
					t.Errorf("%s offset %d: fast offset-commit decode disagrees: %+v vs %+v", rr.file, rr.offset, fast, *ov)
				}
			}
			label := fmt.Sprintf("type %2d %-38s", rec.Key.Type, rec.Key.Type)
			if rec.Tombstone() {
				label += " tombstone"
			} else {
				label += fmt.Sprintf(" v%d", rec.Value.ValueVersion())
			}
			counts[label]++
			k, v, err := Encode(rec)
			if err != nil {
				t.Errorf("%s offset %d: encode: %v", rr.file, rr.offset, err)
				return
			}
			if !bytes.Equal(k, rr.key) {
				t.Errorf("%s offset %d: key re-encodes to %x, want %x", rr.file, rr.offset, k, rr.key)
			}
			if !bytes.Equal(v, rr.value) || (v == nil) != (rr.value == nil) {
				t.Errorf("%s offset %d: value re-encodes to %x, want %x", rr.file, rr.offset, v, rr.value)
			}
		})
	}
	var labels []string
	for l := range counts {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	t.Logf("%d files, %d bytes, %d batches, %d records", len(files), totalBytes, batches, total)
	for _, l := range labels {
		t.Logf("  %s %8d", l, counts[l])
	}
	if len(files) != 146 || totalBytes != 11307045 {
		t.Errorf("corpus is %d files / %d bytes; PROVENANCE.md says 146 files / 11307045 bytes", len(files), totalBytes)
	}
}
