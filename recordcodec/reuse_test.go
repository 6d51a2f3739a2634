package recordcodec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// decodableVectors returns the vectors whose key and value decode (trailing value bytes
// allowed), grouped by record type and layout.
func decodableVectors(t *testing.T) map[string][]vector {
	t.Helper()
	out := map[string][]vector{}
	for _, v := range loadVectors(t) {
		if v.value == nil {
			continue
		}
		rec, err := Decoder{Layout: v.layout}.Record(v.key, v.value)
		var te *TrailingBytesError
		if err != nil && !(errors.As(err, &te) && te.Part == "value") {
			continue
		}
		k := fmt.Sprintf("%s/%s", rec.Key.Type, v.layout)
		out[k] = append(out[k], v)
	}
	return out
}

// TestDecodeIntoReuses: decoding a value into one that held another value of its type gives
// exactly (every field, unexported ones included, as reflect.DeepEqual compares them; only the
// spare memory of null fields may differ) what a fresh decode gives, and the
// same bytes back, for every ordered pair of vectors of a type and layout; and decoding the
// same value again into it allocates nothing, unless the value has unknown tagged fields (their
// list is allocated, rare: only newer Kafka versions write them) or an error (trailing bytes).
func TestDecodeIntoReuses(t *testing.T) {
	groups := decodableVectors(t)
	if len(groups) < 25 {
		t.Fatalf("only %d record types with decodable vectors", len(groups))
	}
	for name, vs := range groups {
		t.Run(name, func(t *testing.T) {
			d := Decoder{Layout: vs[0].layout, NoCopy: true}
			typ, _ := d.Key(vs[0].key)
			for _, a := range vs {
				for _, b := range vs {
					v := NewValue(typ.Type, d.Layout)
					errA := d.DecodeInto(v, a.value)
					errB := d.DecodeInto(v, b.value)
					fresh, errF := d.Value(typ.Type, b.value)
					if fmt.Sprint(errB) != fmt.Sprint(errF) {
						t.Fatalf("%s after %s: error %v, fresh decode %v (first: %v)", b.name, a.name, errB, errF, errA)
					}
					if !equalButSpares(reflect.ValueOf(v), reflect.ValueOf(fresh)) {
						t.Errorf("%s decoded into the value of %s:\n%#v\nfresh:\n%#v", b.name, a.name, v, fresh)
					}
					got, _ := AppendValue(nil, v)
					want, _ := AppendValue(nil, fresh)
					if !bytes.Equal(got, want) {
						t.Errorf("%s decoded into the value of %s re-encodes to %x, want %x", b.name, a.name, got, want)
					}
				}
			}
			for _, b := range vs {
				v := NewValue(typ.Type, d.Layout)
				if err := d.DecodeInto(v, b.value); err != nil || hasUnknownTags(v) {
					continue
				}
				if n := testing.AllocsPerRun(20, func() { _ = d.DecodeInto(v, b.value) }); n != 0 {
					t.Errorf("%s: decoding into a warm value allocates %.0f times", b.name, n)
				}
			}
		})
	}
}

// hasUnknownTags reports whether any struct reachable from v holds unknown tagged fields.
func hasUnknownTags(v any) bool {
	var walk func(x reflect.Value) bool
	walk = func(x reflect.Value) bool {
		switch x.Kind() {
		case reflect.Pointer, reflect.Interface:
			return !x.IsNil() && walk(x.Elem())
		case reflect.Slice:
			for i := range x.Len() {
				if walk(x.Index(i)) {
					return true
				}
			}
		case reflect.Struct:
			if f := x.FieldByName("UnknownTags"); f.IsValid() && f.Len() > 0 {
				return true
			}
			for i := range x.NumField() {
				if walk(x.Field(i)) {
					return true
				}
			}
		}
		return false
	}
	return walk(reflect.ValueOf(v))
}

// equalButSpares is reflect.DeepEqual that skips the spare* fields (memory kept for reuse,
// not part of the value).
func equalButSpares(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalButSpares(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !equalButSpares(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if strings.HasPrefix(a.Type().Field(i).Name, "spare") {
				continue
			}
			if !equalButSpares(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	}
	panic("equalButSpares: unexpected kind " + a.Kind().String())
}
