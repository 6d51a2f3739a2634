package groupstate

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The primitive encoding of a state image (image.go): varints and length-prefixed strings.
// Slices and maps carry their nil-ness (length+1, 0 = nil) because the state distinguishes a
// nil list from an empty one in places (a tag absent vs empty), and a nil map from an empty
// one; an image restores exactly what was there.
//
// imageWriter writes the primitives and imageReader reads them. The structs of the state are
// never written or read field by field with them, but through the codec (imagecodec.go),
// whose one method per struct visits each field once and either writes or reads it.

// ErrImageCorrupt is the error of every image that does not decode.
var ErrImageCorrupt = errors.New("groupstate: corrupt state image")

type imageWriter struct{ b []byte }

func (w *imageWriter) uv(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *imageWriter) v(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *imageWriter) u8(v uint8)  { w.b = append(w.b, v) }

func (w *imageWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *imageWriter) str(s string) {
	w.uv(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *imageWriter) strp(p *string) {
	if p == nil {
		w.b = append(w.b, 0)
		return
	}
	w.b = append(w.b, 1)
	w.str(*p)
}

// count writes a length with nil-ness: 0 for nil, n+1 otherwise.
func (w *imageWriter) count(n int, isNil bool) {
	if isNil {
		w.uv(0)
	} else {
		w.uv(uint64(n) + 1)
	}
}

func (w *imageWriter) bytes(b []byte) {
	w.count(len(b), b == nil)
	w.b = append(w.b, b...)
}

func (w *imageWriter) uuid(u Uuid) { w.b = append(w.b, u[:]...) }

func (w *imageWriter) strs(s []string) {
	w.count(len(s), s == nil)
	for _, x := range s {
		w.str(x)
	}
}

func (w *imageWriter) i32s(s []int32) {
	w.count(len(s), s == nil)
	for _, x := range s {
		w.v(int64(x))
	}
}

func (w *imageWriter) i16s(s []int16) {
	w.count(len(s), s == nil)
	for _, x := range s {
		w.v(int64(x))
	}
}

// imageReader reads what imageWriter writes from a string: strings it returns are substrings
// of the image (no copy, no allocation). The first error sticks: later reads return zero
// values, and the caller checks err once per entry.
type imageReader struct {
	s   string
	i   int
	err error
	// Slabs the small slices of a part are cut from (full slice expressions, so that an
	// append by a later replay reallocates instead of writing into a neighbour): one
	// allocation per few thousand elements instead of one per list.
	i32Slab []int32
	strSlab []string
	tpSlab  []TopicPartitions
	tpeSlab []TopicPartitionsWithEpochs
	// what names the part of the image being read, and entry the entry (index and id) when
	// what is "entry", for errors.
	what    string
	entry   int
	entryID string
}

func (r *imageReader) fail(format string, args ...any) {
	if r.err == nil {
		what := r.what
		if what == "entry" {
			what = fmt.Sprintf("entry %d (%q)", r.entry, r.entryID)
		}
		r.err = fmt.Errorf("%w: %s: at byte %d: %s", ErrImageCorrupt, what, r.i, fmt.Sprintf(format, args...))
	}
	r.i = len(r.s)
}

func (r *imageReader) left() int { return len(r.s) - r.i }

// formatFollows reports whether a part begins with a format (imageCodec.partHeader): a zero
// byte that is not the whole part.
func (r *imageReader) formatFollows() bool { return r.left() > 1 && r.s[r.i] == 0 }

func (r *imageReader) uv() uint64 {
	// Most values are small: one byte, one branch.
	if r.i < len(r.s) {
		if c := r.s[r.i]; c < 0x80 {
			r.i++
			return uint64(c)
		}
	}
	return r.uvSlow()
}

func (r *imageReader) uvSlow() uint64 {
	s := r.s[r.i:]
	var x uint64
	for j := 0; j < len(s) && j < binary.MaxVarintLen64; j++ {
		c := s[j]
		if c < 0x80 {
			if j == binary.MaxVarintLen64-1 && c > 1 || c == 0 {
				break // too long for 64 bits, or a needless trailing zero group (not canonical)
			}
			r.i += j + 1
			return x | uint64(c)<<(7*j)
		}
		x |= uint64(c&0x7f) << (7 * j)
	}
	r.fail("bad varint")
	return 0
}

func (r *imageReader) v() int64 {
	u := r.uv()
	return int64(u>>1) ^ -int64(u&1)
}

// vInto is v into *p, with the one-byte case inline: one call per value, as v inlined
// into its caller is, from the codec's i64 (which inlines it).
func (r *imageReader) vInto(p *int64) {
	var u uint64
	if r.i < len(r.s) && r.s[r.i] < 0x80 {
		u = uint64(r.s[r.i])
		r.i++
	} else {
		u = r.uvSlow()
	}
	*p = int64(u>>1) ^ -int64(u&1)
}

// flag reads a presence byte: 0 or 1, else the image is corrupt (bad says what it stood
// for).
func (r *imageReader) flag(bad string) bool {
	switch r.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail("%s", bad)
	return false
}

// signed reads a varint that must fit bits bits.
func (r *imageReader) signed(bits uint) int64 {
	x := r.v()
	if lim := int64(1) << (bits - 1); x < -lim || x >= lim {
		r.fail("%d does not fit an int%d", x, bits)
		return 0
	}
	return x
}

// i32Into is i32 into *p, with a one-byte varint (always in range) read inline: one call
// for most values instead of two.
func (r *imageReader) i32Into(p *int32) {
	if r.i < len(r.s) {
		if c := r.s[r.i]; c < 0x80 {
			r.i++
			*p = int32(int64(c>>1) ^ -int64(c&1))
			return
		}
	}
	*p = r.i32()
}

func (r *imageReader) i32() int32 { return int32(r.signed(32)) }
func (r *imageReader) i16() int16 { return int16(r.signed(16)) }
func (r *imageReader) i8() int8   { return int8(r.signed(8)) }

func (r *imageReader) u8() uint8 {
	if r.i >= len(r.s) {
		r.fail("truncated")
		return 0
	}
	c := r.s[r.i]
	r.i++
	return c
}

func (r *imageReader) bool() bool {
	switch r.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail("bad bool")
	return false
}

func (r *imageReader) str() string {
	n := r.uv()
	if n > uint64(r.left()) {
		r.fail("string of %d bytes, %d left", n, r.left())
		return ""
	}
	s := r.s[r.i : r.i+int(n)]
	r.i += int(n)
	return s
}

// strInto is str into *p, with a string of fewer than 128 bytes read inline (most are): one
// call for most strings instead of two.
func (r *imageReader) strInto(p *string) {
	if i := r.i; i < len(r.s) {
		if n := int(r.s[i]); n < 0x80 && n < len(r.s)-i {
			*p = r.s[i+1 : i+1+n]
			r.i = i + 1 + n
			return
		}
	}
	*p = r.str()
}

func (r *imageReader) strp() *string {
	if !r.bool() {
		return nil
	}
	s := r.str()
	return &s
}

// count reads a length written by imageWriter.count. Each element takes at least minSize
// bytes, so a count the remaining bytes cannot hold is corrupt (and never allocates).
func (r *imageReader) count(minSize int) (n int, isNil bool) {
	c := r.uv()
	if c == 0 {
		return 0, true
	}
	c--
	if c > uint64(r.left()/minSize) {
		r.fail("%d elements, %d bytes left", c, r.left())
		return 0, true
	}
	return int(c), false
}

// length reads a plain count (no nil) of elements of at least minSize bytes each; a count
// the remaining bytes cannot hold is corrupt and reads as 0.
func (r *imageReader) length(minSize int, what string) int {
	n := r.uv()
	if n > uint64(r.left()/minSize) {
		r.fail("%d %s, %d bytes left", n, what, r.left())
		return 0
	}
	return int(n)
}

func (r *imageReader) bytes() []byte {
	n, isNil := r.count(1)
	if isNil {
		return nil
	}
	b := []byte(r.s[r.i : r.i+n])
	r.i += n
	return b
}

func (r *imageReader) uuid() (u Uuid) {
	if r.left() < len(u) {
		r.fail("truncated uuid")
		return u
	}
	copy(u[:], r.s[r.i:])
	r.i += len(u)
	return u
}

func (r *imageReader) strs() []string {
	n, isNil := r.count(1)
	if isNil {
		return nil
	}
	s := cut(&r.strSlab, n)
	for i := range s {
		s[i] = r.str()
	}
	return s
}

func (r *imageReader) i32s() []int32 {
	n, isNil := r.count(1)
	if isNil {
		return nil
	}
	s := cut(&r.i32Slab, n)
	for i := range s {
		s[i] = r.i32()
	}
	return s
}

// readList reads a list's length and nil-ness (count) and allocates the list, from slab
// when there is one.
func readList[T any](r *imageReader, minSize int, slab *[]T) []T {
	n, isNil := r.count(minSize)
	switch {
	case isNil:
		return nil
	case slab != nil:
		return cut(slab, n)
	}
	return make([]T, n)
}

// cut returns n elements of *slab (a fresh slab when it has too few left) as a slice whose
// capacity ends at its length.
func cut[T any](slab *[]T, n int) []T {
	const slabSize = 4096
	if n > slabSize/4 {
		return make([]T, n)
	}
	if cap(*slab)-len(*slab) < n {
		*slab = make([]T, 0, slabSize)
	}
	l := len(*slab)
	*slab = (*slab)[:l+n]
	return (*slab)[l : l+n : l+n]
}

func (r *imageReader) i16s() []int16 {
	n, isNil := r.count(1)
	if isNil {
		return nil
	}
	s := make([]int16, n)
	for i := range s {
		s[i] = r.i16()
	}
	return s
}

// sameKeys reports whether keys are exactly the keys of m.
func sameKeys[V any](m map[string]V, keys []string) bool {
	if len(keys) != len(m) {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}
