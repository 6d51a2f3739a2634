package groupstate

import (
	"hash/fnv"
	"reflect"
	"strconv"
	"testing"
	"unsafe"
)

// The state-image tests fill the internal structs by reflection: every field reachable from
// a group, a pending offset or a share-group state entry gets a value, so that a field the
// image does not visit shows up as a difference after a round trip, whatever struct gains
// it. The values derive from the field's path by name (embedded structs add nothing to the
// path), not from its position, so that the same fields get the same values after a struct
// is reorganized: the golden images of filled states stay valid across such changes.

type fillMode int

const (
	// fillEmpty sets every pointer, leaves slices and maps non-nil but empty, and numbers,
	// strings and ids zero.
	fillEmpty fillMode = iota
	// fillOne is fillEmpty with one element in every slice and map.
	fillOne
	// fillFull sets every field to a non-zero value and gives every slice and map two
	// elements.
	fillFull
)

// fillHash is the value a path gets.
func fillHash(path string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	return h.Sum64()
}

// fill sets v (addressable) and everything it reaches, as mode says. It fails t on a kind it
// does not know (an interface, a func, a channel): the image cannot hold those either.
func fill(t *testing.T, v reflect.Value, path string, mode fillMode) {
	t.Helper()
	h := fillHash(path)
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(mode == fillFull)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		if mode == fillFull {
			// Signed, of every width the type holds, never zero.
			bits := v.Type().Bits()
			x := int64(h) >> (64 - bits)
			if x == 0 {
				x = 1
			}
			v.SetInt(x)
		}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		if mode == fillFull {
			v.SetUint(h>>(64-v.Type().Bits()) | 1)
		}
	case reflect.String:
		if mode == fillFull {
			v.SetString(strconv.FormatUint(h, 36))
		}
	case reflect.Array:
		if mode == fillFull {
			for i := range v.Len() {
				fill(t, v.Index(i), path+"["+strconv.Itoa(i)+"]", mode)
			}
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem(), path, mode)
		v.Set(p)
	case reflect.Slice:
		n := 0
		switch mode {
		case fillOne:
			n = 1
		case fillFull:
			n = 2
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(t, s.Index(i), path+"["+strconv.Itoa(i)+"]", mode)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		n := 0
		switch mode {
		case fillOne:
			n = 1 // with a zero key
		case fillFull:
			n = 2
		}
		{
			for i := range n {
				k := reflect.New(v.Type().Key()).Elem()
				fill(t, k, path+"{key "+strconv.Itoa(i)+"}", mode)
				e := reflect.New(v.Type().Elem()).Elem()
				fill(t, e, path+"{"+strconv.Itoa(i)+"}", mode)
				m.SetMapIndex(k, e)
			}
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			fv := v.Field(i)
			if !f.IsExported() {
				fv = reflect.NewAt(fv.Type(), unsafe.Pointer(fv.UnsafeAddr())).Elem()
			}
			p := path
			if !f.Anonymous {
				p += "." + f.Name
			}
			fill(t, fv, p, mode)
		}
		switch x := v.Addr().Interface().(type) {
		case *kafkaTable:
			// The image checks that a table's size is a power of two of at least 2, ...
			x.slots = minSlots << (h % 29)
		case *assignorCount:
			// ... and that a server assignor is named by some member.
			x.members = 1 + int32(h%1000)
		}
	default:
		t.Fatalf("fill: %s is a %s, which a state image cannot hold", path, v.Kind())
	}
}

// filled returns a new *T filled as mode says.
func filled[T any](t *testing.T, path string, mode fillMode) *T {
	t.Helper()
	p := new(T)
	fill(t, reflect.ValueOf(p).Elem(), path, mode)
	return p
}

// filledState is a state whose groups (one of each type), pending offsets and share-group
// state metadata are filled by reflection; it has no committed offsets (their rows are the
// pending offsets' OffsetAndMetadata) and its open-transactions index follows the pending
// offsets.
func filledState(t *testing.T, mode fillMode) *State {
	t.Helper()
	s := New(Kafka44)
	s.groups["classic"] = filled[classicGroup](t, "classic", mode)
	s.groups["consumer"] = filled[consumerGroup](t, "consumer", mode)
	s.groups["share"] = filled[shareGroup](t, "share", mode)
	s.groups["streams"] = filled[streamsGroup](t, "streams", mode)
	s.pending = *filled[map[int64]map[offsetKey]OffsetAndMetadata](t, "pending", mode)
	for pid, p := range s.pending {
		for k := range p {
			s.open[k] = append(s.open[k], pid)
		}
	}
	for k, ids := range s.open {
		if len(ids) == 2 && ids[0] > ids[1] {
			s.open[k] = []int64{ids[1], ids[0]}
		}
	}
	s.shareStateMeta = *filled[map[string]ShareStatePartitionMetadata](t, "shareStateMeta", mode)
	return s
}
