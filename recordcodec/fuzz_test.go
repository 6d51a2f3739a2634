package recordcodec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// The fuzz targets check that no input makes a decoder panic or hang, and that everything that
// decodes re-encodes to the same bytes. Run one with, for example:
//
//	go test ./recordcodec -run '^$' -fuzz FuzzValue -fuzztime 30s -fuzzminimizetime 1s

func seedFromVectors(f *testing.F, add func(v vector)) {
	for _, v := range loadVectors(f) {
		add(v)
	}
}

func FuzzKey(f *testing.F) {
	seedFromVectors(f, func(v vector) { f.Add(v.key) })
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, l := range []Layout{LayoutCurrent, Layout40, LayoutStreamsPreview} {
			k, err := Decoder{Layout: l}.Key(b)
			var te *TrailingBytesError
			var ue *UnknownTypeError
			switch {
			case err == nil, errors.As(err, &ue):
				got, encErr := k.AppendTo(nil)
				if encErr != nil || !bytes.Equal(got, b) {
					t.Fatalf("layout %s: key %x re-encodes to %x (%v)", l, b, got, encErr)
				}
			case errors.As(err, &te):
				got, _ := k.AppendTo(nil)
				if !bytes.Equal(got, b[:te.Pos]) {
					t.Fatalf("key %x with trailing bytes re-encodes to %x", b, got)
				}
			}
			_ = AppendDumpLogKey(nil, k)
			// The aliasing decoder (its own fast path) gives the same key and error.
			k2, err2 := Decoder{Layout: l, NoCopy: true}.Key(b)
			if fmt.Sprint(err2) != fmt.Sprint(err) || !reflect.DeepEqual(k2, k) {
				t.Fatalf("layout %s: NoCopy key %+v (%v), copying %+v (%v)", l, k2, err2, k, err)
			}
		}
	})
}

func FuzzValue(f *testing.F) {
	seedFromVectors(f, func(v vector) {
		if len(v.key) >= 2 && v.value != nil {
			f.Add(int16(v.key[0])<<8|int16(v.key[1]), uint8(v.layout), v.value)
		}
	})
	f.Fuzz(func(t *testing.T, typ int16, layout uint8, b []byte) {
		d := Decoder{Layout: Layout(layout % 4)}
		v, err := d.Value(RecordType(typ), b)
		var te *TrailingBytesError
		var ue *UnknownTypeError
		switch {
		case err == nil, errors.As(err, &ue):
			got, encErr := AppendValue(nil, v)
			if encErr != nil || !bytes.Equal(got, b) {
				t.Fatalf("type %d layout %s: value %x re-encodes to %x (%v)", typ, d.Layout, b, got, encErr)
			}
		case errors.As(err, &te):
			got, _ := AppendValue(nil, v)
			if !bytes.Equal(got, b[:te.Pos]) {
				t.Fatalf("type %d: value %x with trailing bytes re-encodes to %x", typ, b, got)
			}
		default:
			return
		}
		// Aliasing decode agrees, and rendering never panics.
		d.NoCopy = true
		v2, _ := d.Value(RecordType(typ), b)
		if a, c := AppendConsoleJSON(nil, Record{Value: v}), AppendConsoleJSON(nil, Record{Value: v2}); !bytes.Equal(a, c) {
			t.Fatalf("NoCopy decode differs: %s vs %s", a, c)
		}
		_ = AppendDumpLogPayload(nil, v)
		// Decoding into a value that held another decode (of a prefix of b, whatever it gave)
		// gives the same value: nothing of the earlier decode survives.
		if w := NewValue(RecordType(typ), d.Layout); w != nil && v.ValueVersion() >= 0 {
			if _, isRaw := v.(*RawValue); !isRaw {
				_ = d.DecodeInto(w, b[:len(b)/2])
				_ = d.DecodeInto(w, b[:len(b)*3/4])
				if err := d.DecodeInto(w, b); err == nil || errors.As(err, &te) {
					if a, c := AppendConsoleJSON(nil, Record{Value: v}), AppendConsoleJSON(nil, Record{Value: w}); !bytes.Equal(a, c) {
						t.Fatalf("decode into a used value differs: %s vs %s", c, a)
					}
				}
			}
		}
	})
}

func FuzzControl(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 5})
	f.Add([]byte{0, 0, 0, 0}, []byte{0, 1, 0, 0, 0, 5, 9})
	f.Add([]byte{0, 1, 0, 1, 7}, []byte{0, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if k, err := DecodeControlKey(key); err == nil {
			if got := k.AppendTo(nil); !bytes.Equal(got, key) {
				t.Fatalf("control key %x re-encodes to %x", key, got)
			}
		}
		if m, err := DecodeEndTxnMarker(value); err == nil {
			if got := m.AppendTo(nil); !bytes.Equal(got, value) {
				t.Fatalf("marker %x re-encodes to %x", value, got)
			}
		}
	})
}

func FuzzConsumerProtocol(f *testing.F) {
	seedFromVectors(f, func(v vector) {
		rec, err := Decoder{}.Record(v.key, v.value)
		if g, ok := rec.Value.(*GroupMetadataValue); ok && err == nil {
			for _, m := range g.Members {
				f.Add(m.Subscription)
				f.Add(m.Assignment)
			}
		}
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := DecodeConsumerSubscription(b); err == nil {
			got, err := AppendValue(nil, valueAdapter{s})
			if err != nil || !bytes.HasPrefix(b, got) {
				t.Fatalf("subscription %x re-encodes to %x (%v)", b, got, err)
			}
		}
		if a, err := DecodeConsumerAssignment(b); err == nil {
			got, err := AppendValue(nil, valueAdapter{a})
			if err != nil || !bytes.HasPrefix(b, got) {
				t.Fatalf("assignment %x re-encodes to %x (%v)", b, got, err)
			}
		}
		_, _ = DecodeConsumerSubscriptionLenient(b)
		_, _ = DecodeConsumerAssignmentLenient(b)
		// The dump-log rendering of a consumer group member with these bytes never panics.
		g := NewGroupMetadataValue()
		g.ProtocolType = "consumer"
		g.Members = []MemberMetadata{{Subscription: b, Assignment: b}}
		_ = AppendDumpLogPayload(nil, g)
	})
}

// valueAdapter lets the ConsumerProtocol messages use AppendValue's version-prefix framing.
type valueAdapter struct {
	m interface {
		ValueVersion() int16
		versionRange() (int16, int16)
		appendBody([]byte) ([]byte, error)
	}
}

func (a valueAdapter) RecordType() RecordType              { return -1 }
func (a valueAdapter) ValueVersion() int16                 { return a.m.ValueVersion() }
func (a valueAdapter) Layout() Layout                      { return LayoutCurrent }
func (a valueAdapter) versionRange() (int16, int16)        { return a.m.versionRange() }
func (a valueAdapter) decodeBody(r reader, _ int16) reader { return r }
func (a valueAdapter) appendBody(b []byte) ([]byte, error) { return a.m.appendBody(b) }
func (a valueAdapter) writeJSONBody(*jsonWriter)           {}

// FuzzOffsetCommitFastPath: the fast decoder agrees with the general one on every input it
// accepts, and accepts what Kafka writes.
func FuzzOffsetCommitFastPath(f *testing.F) {
	seedFromVectors(f, func(v vector) {
		if len(v.key) >= 2 && v.key[1] == 1 && v.value != nil {
			f.Add(v.value)
		}
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast OffsetCommitValue
		ok := fast.decodeFast(b, false)
		slow, err := Decoder{}.Value(OffsetCommit, b)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("fast path accepted %x, general path says %v", b, err)
		}
		if got, want := AppendConsoleJSON(nil, Record{Value: &fast}), AppendConsoleJSON(nil, Record{Value: slow}); !bytes.Equal(got, want) {
			t.Fatalf("fast %s, general %s", got, want)
		}
		enc, _ := AppendValue(nil, &fast)
		if !bytes.Equal(enc, b) {
			t.Fatalf("fast-decoded value re-encodes to %x, want %x", enc, b)
		}
	})
}
