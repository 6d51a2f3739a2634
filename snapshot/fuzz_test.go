package snapshot_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/coordlog/coordlog/snapshot"
)

// FuzzDecode feeds arbitrary files to Decode: it must fail cleanly, never panic or allocate
// without bound, and what it accepts must re-encode to the same payload.
func FuzzDecode(f *testing.F) {
	if b, err := os.ReadFile("testdata/format-v1.snap"); err == nil {
		f.Add(b)
	}
	var buf bytes.Buffer
	_, _ = snapshot.Encode(&buf, meta(1, 2), custom{IDs: []id{{1}}, Pairs: pairs{{"k", 1}}})
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		var st state
		if _, err := snapshot.Decode(bytes.NewReader(b), int64(len(b)), &st); err != nil {
			return
		}
		var c custom
		_, _ = snapshot.Decode(bytes.NewReader(b), int64(len(b)), &c)
	})
}

// FuzzDecodePayload skips the checksum: payload bytes that pass a CRC by accident (or by
// hand) must still fail cleanly.
func FuzzDecodePayload(f *testing.F) {
	for _, v := range []any{sampleState(2, 2, 2), custom{IDs: []id{{1}}, One: id{2}, Pairs: pairs{{"k", 1}}}} {
		var buf bytes.Buffer
		_, _ = snapshot.Encode(&buf, snapshot.Meta{}, v)
		b := buf.Bytes()
		h, err := snapshot.ReadHeader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[h.MetaEnd : h.MetaEnd+h.PayloadLen])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h := snapshot.Header{MetaEnd: 0, PayloadLen: int64(len(b)), Size: int64(len(b))}
		var st state
		_ = snapshot.DecodePayload(bytes.NewReader(b), h, &st)
		var c custom
		_ = snapshot.DecodePayload(bytes.NewReader(b), h, &c)
	})
}
