package recordcodec

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// reader walks one key or value buffer. The first failure is kept with the field and the byte
// position where it happened; every later read is a no-op returning a zero value, so generated
// code checks r.err only where it must (loops and tagged sections).
type reader struct {
	b     []byte
	off   int
	err   error
	field string
	at    int
	// alias makes strings and byte slices point into b. Otherwise b is copied once, at the
	// first string or bytes field, and everything points into the copy: one allocation per
	// buffer instead of one per field.
	alias bool
	own   []byte
}

func (r *reader) fail(field string, err error) { r.failAt(field, err, r.off) }

// failAt records the first failure; pos is where the failing field starts.
func (r *reader) failAt(field string, err error, pos int) {
	if r.err == nil {
		r.err, r.field, r.at = err, field, pos
	}
}

func (r *reader) remaining() int { return len(r.b) - r.off }

func (r *reader) need(n int, field string) bool { return r.needFrom(n, field, r.off) }

// needFrom checks that n more bytes are left; a failure is reported at start, where the field
// (its length prefix included) begins.
func (r *reader) needFrom(n int, field string, start int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || r.remaining() < n {
		r.failAt(field, ErrTruncated, start)
		return false
	}
	return true
}

func (r *reader) int8(field string) int8 {
	if !r.need(1, field) {
		return 0
	}
	v := int8(r.b[r.off])
	r.off++
	return v
}

func (r *reader) int16(field string) int16 {
	if !r.need(2, field) {
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.b[r.off:]))
	r.off += 2
	return v
}

func (r *reader) uint16(field string) uint16 {
	return uint16(r.int16(field))
}

func (r *reader) int32(field string) int32 {
	if !r.need(4, field) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b[r.off:]))
	r.off += 4
	return v
}

// int32s fills a with the next len(a) int32s (an array whose count arrayLen checked, so that
// they fit when no error came before).
func (r *reader) int32s(a []int32) {
	if r.err != nil {
		clear(a)
		return
	}
	b := r.b[r.off : r.off+4*len(a)]
	for i := range a {
		if len(b) < 4 {
			break // cannot happen (the length above); lets the compiler drop the checks
		}
		a[i] = int32(binary.BigEndian.Uint32(b))
		b = b[4:]
	}
	r.off += 4 * len(a)
}

func (r *reader) int64(field string) int64 {
	if !r.need(8, field) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b[r.off:]))
	r.off += 8
	return v
}

func (r *reader) uuid(field string) UUID {
	var u UUID
	if !r.need(16, field) {
		return u
	}
	copy(u[:], r.b[r.off:])
	r.off += 16
	return u
}

// uvarint reads an unsigned LEB128 value of at most 5 bytes. Kafka's writers always use the
// shortest form; a longer one is rejected as non-canonical so that re-encoding is byte-exact.
func (r *reader) uvarint(field string) uint32 {
	if r.err != nil {
		return 0
	}
	if r.off < len(r.b) && r.b[r.off] < 0x80 {
		// One byte, the usual length or count: always canonical.
		r.off++
		return uint32(r.b[r.off-1])
	}
	return r.uvarintLong(field)
}

func (r *reader) uvarintLong(field string) uint32 {
	start := r.off
	var v uint32
	for i := 0; i < 5; i++ {
		if r.off >= len(r.b) {
			r.failAt(field, ErrTruncated, start)
			return 0
		}
		c := r.b[r.off]
		r.off++
		if i == 4 && c > 0x0f {
			r.failAt(field, ErrVarintOverflow, start)
			return 0
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			if c == 0 && i > 0 {
				r.failAt(field, ErrNonCanonical, start)
				return 0
			}
			return v
		}
	}
	r.failAt(field, ErrVarintOverflow, start)
	return 0
}

// view returns the next n bytes, from the reader's own copy unless aliasing, with a capacity
// capped at n so that appending to a returned slice never overwrites a neighbour.
func (r *reader) view(n int) []byte {
	src := r.b
	if !r.alias {
		if r.own == nil {
			r.own = append(make([]byte, 0, len(r.b)), r.b...)
		}
		src = r.own
	}
	v := src[r.off : r.off+n : r.off+n]
	r.off += n
	return v
}

func (r *reader) viewString(n int) string {
	if n == 0 {
		return ""
	}
	v := r.view(n)
	return unsafe.String(&v[0], n)
}

// length reads a string or bytes length: int16 (strings) or int32 (bytes) when not flexible,
// uvarint(n+1) when flexible. It returns -1 for null.
func (r *reader) length(flex, wide bool, field string) int {
	start := r.off
	if flex {
		n := r.uvarint(field)
		if r.err != nil {
			return 0
		}
		return int(n) - 1
	}
	var n int
	if wide {
		n = int(r.int32(field))
	} else {
		n = int(r.int16(field))
	}
	if r.err != nil {
		return 0
	}
	if n < -1 {
		r.failAt(field, ErrInvalidLength, start)
		return 0
	}
	return n
}

// str reads a string that may not be null. The usual case, an aliasing reader and a compact
// string shorter than 127 bytes, is inlined; everything else takes strSlow.
func (r *reader) str(flex bool, field string) string {
	if flex && r.alias && r.err == nil && r.off < len(r.b) {
		// c is the length plus one; 0 (null) and longer varints take the slow path.
		if c := int(r.b[r.off]); c-1 < 0x7f && c > 0 && c <= len(r.b)-r.off {
			v := r.b[r.off+1 : r.off+c]
			r.off += c
			return unsafe.String(unsafe.SliceData(v), len(v))
		}
	}
	return r.strSlow(flex, field)
}

func (r *reader) strSlow(flex bool, field string) string {
	start := r.off
	n := r.length(flex, false, field)
	if n < 0 {
		r.failAt(field, ErrUnexpectedNull, start)
		return ""
	}
	if !r.needFrom(n, field, start) {
		return ""
	}
	return r.viewString(n)
}

func (r *reader) nstr(flex bool, field string) *string {
	start := r.off
	n := r.length(flex, false, field)
	if r.err != nil || n < 0 {
		return nil
	}
	if !r.needFrom(n, field, start) {
		return nil
	}
	s := r.viewString(n)
	return &s
}

func (r *reader) bytes(flex bool, field string) []byte {
	start := r.off
	n := r.length(flex, true, field)
	if n < 0 {
		r.failAt(field, ErrUnexpectedNull, start)
		return nil
	}
	if !r.needFrom(n, field, start) {
		return nil
	}
	return r.view(n)
}

// nbytes returns nil for null and a non-nil slice, possibly empty, otherwise.
func (r *reader) nbytes(flex bool, field string) []byte {
	start := r.off
	n := r.length(flex, true, field)
	if r.err != nil || n < 0 {
		return nil
	}
	if !r.needFrom(n, field, start) {
		return nil
	}
	return r.view(n)
}

// raw returns n bytes as they are (an unknown tagged field's payload).
func (r *reader) raw(n int) []byte {
	if !r.need(n, "tagged field") {
		return nil
	}
	return r.view(n)
}

// arrayLen reads an array count. minElem is the smallest wire size of one element: a count that
// cannot fit in the remaining bytes is rejected before anything is allocated.
func (r *reader) arrayLen(flex bool, field string, minElem int, nullable bool) (n int, isNull bool) {
	if flex && r.err == nil && r.off < len(r.b) {
		// The usual case, inlined: a one-byte count (0 is null) of elements that fit.
		if c := int(r.b[r.off]); c-1 < 0x7f && c > 0 && (c-1)*minElem <= len(r.b)-r.off-1 {
			r.off++
			return c - 1, false
		}
	}
	return r.arrayLenSlow(flex, field, minElem, nullable)
}

func (r *reader) arrayLenSlow(flex bool, field string, minElem int, nullable bool) (n int, isNull bool) {
	start := r.off
	if flex {
		c := r.uvarint(field)
		if r.err != nil {
			return 0, false
		}
		n = int(c) - 1
	} else {
		n = int(r.int32(field))
		if r.err != nil {
			return 0, false
		}
		if n < -1 {
			r.failAt(field, ErrInvalidLength, start)
			return 0, false
		}
	}
	if n == -1 {
		if !nullable {
			r.failAt(field, ErrUnexpectedNull, start)
			return 0, false
		}
		return 0, true
	}
	if int64(n)*int64(minElem) > int64(r.remaining()) { // n > remaining/minElem, without a division
		r.failAt(field, ErrTruncated, start)
		return 0, false
	}
	return n, false
}

func (r *reader) structMarker(field string) bool {
	start := r.off
	m := r.int8(field)
	switch {
	case r.err != nil:
		return false
	case m == -1:
		return false
	case m == 1:
		return true
	}
	r.failAt(field, ErrNonCanonical, start)
	return false
}

func (r *reader) taggedStructMarker(field string) bool {
	start := r.off
	m := r.uvarint(field)
	switch {
	case r.err != nil:
		return false
	case m == 0:
		return false
	case m == 1:
		return true
	}
	r.failAt(field, ErrNonCanonical, start)
	return false
}

func (r *reader) tagCount() int {
	if r.off < len(r.b) && r.b[r.off] == 0 {
		// No tagged fields, the usual case. (After an error the count is 0 either way, and
		// the reader's position no longer matters.)
		r.off++
		return 0
	}
	return r.tagCountSlow()
}

func (r *reader) tagCountSlow() int {
	start := r.off
	n := int(r.uvarint("tagged fields"))
	if r.err == nil && int64(n)*2 > int64(r.remaining()) {
		r.failAt("tagged fields", ErrTruncated, start)
		return 0
	}
	return n
}

// tagHeader reads one tag number and payload size. Kafka writes tags in strictly ascending order;
// anything else is rejected so that re-encoding reproduces the input.
func (r *reader) tagHeader(last *int) (tag, size int) {
	start := r.off
	tag = int(r.uvarint("tag"))
	if r.err != nil {
		return 0, 0
	}
	if tag <= *last {
		r.failAt("tag", ErrTagOrder, start)
		return 0, 0
	}
	*last = tag
	size = int(r.uvarint("tag size"))
	if r.err == nil && size > r.remaining() {
		r.failAt("tag size", ErrTruncated, start)
	}
	return tag, size
}

// endTag checks that a known tagged field used exactly the size its header announced; a
// failure is reported where the field's payload starts.
func (r *reader) endTag(end, size, tag int) {
	if r.err == nil && r.off != end {
		r.failAt(fmt.Sprintf("tag %d", tag), ErrTagSize, end-size)
	}
}

func appendInt8(b []byte, v int8) []byte { return append(b, byte(v)) }

func appendInt16(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }

func appendUint16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }

func appendInt32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

func appendInt64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

func appendUuid(b []byte, v UUID) []byte { return append(b, v[:]...) }

func appendUvarint(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func uvarintLen(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendString(b []byte, flex bool, s string) []byte {
	if flex {
		b = appendUvarint(b, uint32(len(s))+1)
	} else {
		b = appendInt16(b, int16(len(s)))
	}
	return append(b, s...)
}

func appendNullString(b []byte, flex bool) []byte {
	if flex {
		return append(b, 0)
	}
	return appendInt16(b, -1)
}

func appendBytes(b []byte, flex bool, v []byte) []byte {
	if flex {
		b = appendUvarint(b, uint32(len(v))+1)
	} else {
		b = appendInt32(b, int32(len(v)))
	}
	return append(b, v...)
}

func appendNullBytes(b []byte, flex bool) []byte {
	if flex {
		return append(b, 0)
	}
	return appendInt32(b, -1)
}

// appendArrayLen writes an array count; n == -1 writes null.
func appendArrayLen(b []byte, flex bool, n int) []byte {
	if flex {
		return appendUvarint(b, uint32(n+1))
	}
	return appendInt32(b, int32(n))
}

func appendRawTag(b []byte, t RawTag) []byte {
	b = appendUvarint(b, t.Tag)
	b = appendUvarint(b, uint32(len(t.Data)))
	return append(b, t.Data...)
}

// patchSize writes the size of the payload that follows the one placeholder byte at mark,
// shifting the payload when the size needs a longer varint.
func patchSize(b []byte, mark int) []byte {
	size := uint32(len(b) - mark - 1)
	n := uvarintLen(size)
	if n > 1 {
		b = append(b, make([]byte, n-1)...)
		copy(b[mark+n:], b[mark+1:len(b)-(n-1)])
	}
	appendUvarint(b[mark:mark], size)
	return b
}

// reuse returns s resized to n elements, in s's own memory when it has room: the elements
// keep their old contents (and so their nested slices' memory) for the reader to overwrite.
// Otherwise it returns a new slice that starts with s's elements. It never returns nil, so
// that an empty array stays distinct from a null one.
func reuse[T any](s []T, n int) []T {
	if s != nil && cap(s) >= n {
		return s[:n]
	}
	a := make([]T, n)
	copy(a, s[:cap(s)])
	return a
}

// nstrInto reads a nullable string into *p, reusing p when it is set; it returns nil for
// null.
func (r *reader) nstrInto(p *string, flex bool, field string) *string {
	start := r.off
	n := r.length(flex, false, field)
	if r.err != nil || n < 0 {
		return nil
	}
	if !r.needFrom(n, field, start) {
		return nil
	}
	if p == nil {
		p = new(string)
	}
	*p = r.viewString(n)
	return p
}

// strInto reads a string that cannot be null into a string pointer, reusing p when set.
func (r *reader) strInto(p *string, flex bool, field string) *string {
	v := r.str(flex, field)
	if p == nil {
		p = new(string)
	}
	*p = v
	return p
}
