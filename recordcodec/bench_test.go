package recordcodec

import (
	"fmt"
	"testing"
)

// benchVectors picks, for each record type and value version, the first hand-built vector that
// decodes without error.
func benchVectors(b *testing.B) []vector {
	var out []vector
	seen := map[string]bool{}
	for _, v := range loadVectors(b) {
		if v.value == nil || v.layout != LayoutCurrent {
			continue
		}
		rec, err := Decode(v.key, v.value)
		if err != nil {
			continue // the error vectors
		}
		name := fmt.Sprintf("type=%02d/%s/v%d", rec.Key.Type, rec.Key.Type, rec.Value.ValueVersion())
		if !seen[name] {
			seen[name] = true
			v.name = name
			out = append(out, v)
		}
	}
	return out
}

// BenchmarkDecode decodes key and value of one record of each type and version.
func BenchmarkDecode(b *testing.B) {
	for _, v := range benchVectors(b) {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(v.key) + len(v.value)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(v.key, v.value); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncode encodes key and value of one record of each type and version into a reused
// buffer.
func BenchmarkEncode(b *testing.B) {
	for _, v := range benchVectors(b) {
		rec, _ := Decode(v.key, v.value)
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(v.key) + len(v.value)))
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				kb, err := rec.Key.AppendTo(buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				if _, err := AppendValue(kb, rec.Value); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOffsetCommit is the hot path of a replay: an OffsetCommit key and a v4 value, as
// Kafka 4.1+ writes them (a realistic group and topic name).
func BenchmarkOffsetCommit(b *testing.B) {
	var key, value []byte
	key, _ = Key{Type: OffsetCommit, Group: "payments-consumer", Topic: "payments.events", Partition: 17}.AppendTo(nil)
	v := NewOffsetCommitValue()
	v.Offset, v.LeaderEpoch, v.CommitTimestamp = 123456789, 4, 1760000000000
	value, _ = EncodeValue(v)
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(key, value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("nocopy", func(b *testing.B) {
		d := Decoder{NoCopy: true}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Record(key, value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("nocopy-into", func(b *testing.B) {
		// Key by value and the value into a caller-owned struct: no allocation at all.
		d := Decoder{NoCopy: true}
		var ov OffsetCommitValue
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Key(key); err != nil {
				b.Fatal(err)
			}
			if err := d.DecodeInto(&ov, value); err != nil {
				b.Fatal(err)
			}
		}
	})
}
