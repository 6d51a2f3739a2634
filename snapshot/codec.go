package snapshot

import (
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Marshaler is implemented by payload types that encode themselves: bulk data (millions of
// committed offsets) where msgpack's reflective struct coding, which writes every field name
// of every element, is too slow and too large. The type must also implement Unmarshaler on
// its pointer. Write the value positionally with the Encoder's methods; the encoding must be
// a pure function of the value.
type Marshaler interface {
	MarshalSnapshot(e *Encoder) error
}

// Unmarshaler reads what the matching Marshaler wrote.
type Unmarshaler interface {
	UnmarshalSnapshot(d *Decoder) error
}

// Encoder writes msgpack values for a Marshaler.
type Encoder struct{ m *msgpack.Encoder }

// ArrayLen starts an array of n values.
func (e *Encoder) ArrayLen(n int) error { return e.m.EncodeArrayLen(n) }

// Int writes an integer in msgpack's shortest form.
func (e *Encoder) Int(v int64) error { return e.m.EncodeInt(v) }

// String writes a string.
func (e *Encoder) String(s string) error { return e.m.EncodeString(s) }

// Bytes writes a byte string (nil and empty alike).
func (e *Encoder) Bytes(b []byte) error { return e.m.EncodeBytes(b) }

// Value writes any value by msgpack's rules (for the small parts).
func (e *Encoder) Value(v any) error { return e.m.Encode(v) }

// Nil writes a nil.
func (e *Encoder) Nil() error { return e.m.EncodeNil() }

// StringPtr writes nil or the string.
func (e *Encoder) StringPtr(s *string) error {
	if s == nil {
		return e.m.EncodeNil()
	}
	return e.m.EncodeString(*s)
}

// Strings writes nil (a nil slice) or an array of strings.
func (e *Encoder) Strings(s []string) error {
	if s == nil {
		return e.m.EncodeNil()
	}
	if err := e.m.EncodeArrayLen(len(s)); err != nil {
		return err
	}
	for _, x := range s {
		if err := e.m.EncodeString(x); err != nil {
			return err
		}
	}
	return nil
}

// Int32s writes nil (a nil slice) or an array of integers.
func (e *Encoder) Int32s(s []int32) error {
	if s == nil {
		return e.m.EncodeNil()
	}
	if err := e.m.EncodeArrayLen(len(s)); err != nil {
		return err
	}
	for _, x := range s {
		if err := e.m.EncodeInt(int64(x)); err != nil {
			return err
		}
	}
	return nil
}

// Decoder reads msgpack values for an Unmarshaler.
type Decoder struct{ m *msgpack.Decoder }

// remaining maps a msgpack decoder running in DecodePayload to the count of payload bytes
// it has not consumed yet, for Decoder.Prealloc.
var remaining sync.Map // *msgpack.Decoder -> func() int64

// Prealloc is the capacity to preallocate for n elements read from the data, each taking at
// least minSize encoded bytes: n, but never more than the payload bytes left allow, so that
// a damaged length cannot make a reader allocate what the data does not hold. Unmarshalers
// use it for every length they read.
func (d *Decoder) Prealloc(n, minSize int) int {
	n = max(n, 0)
	if f, ok := remaining.Load(d.m); ok {
		return int(min(int64(n), f.(func() int64)()/int64(max(minSize, 1))))
	}
	return prealloc(n)
}

// ArrayLen reads an array header.
func (d *Decoder) ArrayLen() (int, error) { return d.m.DecodeArrayLen() }

// Int reads an integer.
func (d *Decoder) Int() (int64, error) { return d.m.DecodeInt64() }

// String reads a string.
func (d *Decoder) String() (string, error) { return d.m.DecodeString() }

// BytesInto reads a byte string of exactly len(dst) bytes into dst without allocating.
func (d *Decoder) BytesInto(dst []byte) error {
	n, err := d.m.DecodeBytesLen()
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("byte string of %d bytes, want %d", n, len(dst))
	}
	return d.m.ReadFull(dst)
}

// Value reads any value by msgpack's rules into v (a pointer).
func (d *Decoder) Value(v any) error { return d.m.Decode(v) }

// BytesBuf reads a byte string into buf's storage (grown when too small) and returns it:
// for Unmarshalers that parse their own chunks without allocating one per chunk.
func (d *Decoder) BytesBuf(buf []byte) ([]byte, error) {
	n, err := d.m.DecodeBytesLen()
	if err != nil {
		return buf[:0], err
	}
	if n < 0 {
		return buf[:0], nil
	}
	// Grow with the bytes actually read, a MiB at a time, so that a damaged length fails at
	// the end of the data instead of allocating what it claims.
	buf = buf[:0]
	for len(buf) < n {
		k := min(n-len(buf), 1<<20)
		buf = slices.Grow(buf, k)[:len(buf)+k]
		if err := d.m.ReadFull(buf[len(buf)-k:]); err != nil {
			return buf[:0], err
		}
	}
	return buf, nil
}

// prealloc caps the capacity preallocated for n decoded elements: lengths come from the
// data, and a damaged one must not allocate without bound (appends grow past it as the
// elements actually decode).
func prealloc(n int) int { return min(max(n, 0), 4096) }

// isNil consumes a nil and reports true, or reports false and consumes nothing.
func (d *Decoder) isNil() (bool, error) {
	c, err := d.m.PeekCode()
	if err != nil {
		return false, err
	}
	if c != msgpcode.Nil {
		return false, nil
	}
	return true, d.m.DecodeNil()
}

// StringPtr reads what Encoder.StringPtr writes.
func (d *Decoder) StringPtr() (*string, error) {
	if null, err := d.isNil(); null || err != nil {
		return nil, err
	}
	s, err := d.m.DecodeString()
	return &s, err
}

// Strings reads what Encoder.Strings writes (nil stays nil, empty stays empty).
func (d *Decoder) Strings() ([]string, error) {
	if null, err := d.isNil(); null || err != nil {
		return nil, err
	}
	n, err := d.m.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([]string, 0, d.Prealloc(n, 1))
	for range n {
		x, err := d.m.DecodeString()
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// Int32s reads what Encoder.Int32s writes (nil stays nil, empty stays empty).
func (d *Decoder) Int32s() ([]int32, error) {
	if null, err := d.isNil(); null || err != nil {
		return nil, err
	}
	n, err := d.m.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([]int32, 0, d.Prealloc(n, 1))
	for range n {
		x, err := d.m.DecodeInt32()
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

var (
	marshalerType     = reflect.TypeFor[Marshaler]()
	unmarshalerType   = reflect.TypeFor[Unmarshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// registerCodecs teaches msgpack, once per type and before msgpack first sees the type, the
// two encodings this package adds: Marshaler types encode themselves, and byte arrays (UUIDs)
// are raw bytes even when they have a MarshalText, which would cost a base64 string and an
// allocation per value. A byte array that arrives as a string (MarshalText form) still
// decodes. It reports whether the walk should stop at t.
func registerCodecs(t reflect.Type) (handled bool, err error) {
	switch {
	case t.Implements(marshalerType):
		if !reflect.PointerTo(t).Implements(unmarshalerType) {
			return true, fmt.Errorf("%w: %s implements Marshaler but *%s not Unmarshaler", ErrPayloadType, t, t)
		}
		msgpack.Register(reflect.Zero(t).Interface(),
			func(enc *msgpack.Encoder, v reflect.Value) error {
				return v.Interface().(Marshaler).MarshalSnapshot(&Encoder{enc})
			},
			func(dec *msgpack.Decoder, v reflect.Value) error {
				return v.Addr().Interface().(Unmarshaler).UnmarshalSnapshot(&Decoder{dec})
			})
		return true, nil
	case t.Kind() == reflect.Array && t.Elem().Kind() == reflect.Uint8 && t.Implements(textMarshalerType):
		msgpack.Register(reflect.Zero(t).Interface(),
			func(enc *msgpack.Encoder, v reflect.Value) error {
				if v.CanAddr() {
					return enc.EncodeBytes(v.Slice(0, v.Len()).Bytes())
				}
				b := make([]byte, v.Len())
				reflect.Copy(reflect.ValueOf(b), v)
				return enc.EncodeBytes(b)
			},
			func(dec *msgpack.Decoder, v reflect.Value) error {
				c, err := dec.PeekCode()
				if err != nil {
					return err
				}
				if msgpcode.IsString(c) {
					s, err := dec.DecodeString()
					if err != nil {
						return err
					}
					u, ok := v.Addr().Interface().(encoding.TextUnmarshaler)
					if !ok {
						return fmt.Errorf("%s in text form but without UnmarshalText", v.Type())
					}
					return u.UnmarshalText([]byte(s))
				}
				n, err := dec.DecodeBytesLen()
				if err != nil {
					return err
				}
				if n != v.Len() {
					return fmt.Errorf("%s of %d bytes, want %d", v.Type(), n, v.Len())
				}
				return dec.ReadFull(v.Slice(0, n).Bytes())
			})
		return true, nil
	}
	return false, nil
}
