package jsondoc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
)

// Seq is a list that a document streams: its elements are produced one at a time while the
// document is written by an Encoder, and never held together. It is how a document of
// millions of groups or offsets stays in bounded memory: each group is converted, with its
// offsets read from the state, only when its turn comes.
//
// encoding/json writes a Seq as the array of its elements too (MarshalJSON collects them), so
// that any document marshals as usual, holding what it holds.
type Seq[T any] func(yield func(T) bool)

// MarshalJSON writes the elements as an array ([] when there are none).
func (s Seq[T]) MarshalJSON() ([]byte, error) {
	all := []T{}
	if s != nil {
		s(func(v T) bool { all = append(all, v); return true })
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the encoder that called this escapes as it was told to
	err := enc.Encode(all)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

func (s Seq[T]) each(yield func(any) bool) {
	if s != nil {
		s(func(v T) bool { return yield(v) })
	}
}

// streamed is what an Encoder walks element by element: a Seq.
type streamed interface{ each(yield func(any) bool) }

var streamedType = reflect.TypeFor[streamed]()

// Encoder writes documents exactly as a json.Encoder with SetIndent("", "  ") (and the same
// HTML escaping) writes them, but streams every Seq inside them: the parts of a document that
// hold a Seq are written field by field and element by element, and everything else, each
// field and each element, through encoding/json. The bytes are the same as json.Encoder's
// (TestEncoderEqualsEncodingJSON); only the memory differs.
type Encoder struct {
	w          *bufio.Writer
	escapeHTML bool
	buf        bytes.Buffer
	err        error
}

// NewEncoder returns an encoder writing to w, escaping HTML characters in strings as
// json.NewEncoder does until told otherwise.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: bufio.NewWriter(w), escapeHTML: true}
}

// SetEscapeHTML says whether <, > and & in strings are escaped (json.Encoder.SetEscapeHTML).
func (e *Encoder) SetEscapeHTML(on bool) { e.escapeHTML = on }

// Encode writes v and a newline.
func (e *Encoder) Encode(v any) error {
	e.err = nil
	e.value(reflect.ValueOf(v), 0)
	e.raw("\n")
	if err := e.w.Flush(); e.err == nil {
		e.err = err
	}
	return e.err
}

func (e *Encoder) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

func indent(depth int) string { return strings.Repeat("  ", depth) }

// value writes v, whose first line is already indented to depth.
func (e *Encoder) value(v reflect.Value, depth int) {
	if e.err != nil {
		return
	}
	if !v.IsValid() || !streams(v.Type()) {
		e.plain(v, depth)
		return
	}
	if v.Type().Implements(streamedType) {
		if v.Kind() == reflect.Func && v.IsNil() {
			e.raw("[]")
			return
		}
		n := 0
		v.Interface().(streamed).each(func(x any) bool {
			e.element(n, depth)
			e.value(reflect.ValueOf(x), depth+1)
			n++
			return e.err == nil
		})
		e.close(n, depth)
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			e.raw("null")
			return
		}
		e.value(v.Elem(), depth)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			e.raw("null")
			return
		}
		for i := range v.Len() {
			e.element(i, depth)
			e.value(v.Index(i), depth+1)
		}
		e.close(v.Len(), depth)
	case reflect.Struct:
		n := 0
		for _, f := range fieldsOf(v.Type()) {
			fv := v.FieldByIndex(f.index)
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			if n == 0 {
				e.raw("{")
			} else {
				e.raw(",")
			}
			e.raw("\n" + indent(depth+1) + f.key + ": ")
			e.value(fv, depth+1)
			n++
		}
		if n == 0 {
			e.raw("{}")
			return
		}
		e.raw("\n" + indent(depth) + "}")
	default:
		e.err = fmt.Errorf("jsondoc: cannot stream a %s", v.Type())
	}
}

// element starts element i of an array at depth.
func (e *Encoder) element(i, depth int) {
	if i == 0 {
		e.raw("[")
	} else {
		e.raw(",")
	}
	e.raw("\n" + indent(depth+1))
}

// close ends an array of n elements at depth ("[]" when there were none).
func (e *Encoder) close(n, depth int) {
	if n == 0 {
		e.raw("[]")
		return
	}
	e.raw("\n" + indent(depth) + "]")
}

// plain writes v through encoding/json, indented as if it stood at depth.
func (e *Encoder) plain(v reflect.Value, depth int) {
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetEscapeHTML(e.escapeHTML)
	enc.SetIndent(indent(depth), "  ")
	var x any
	if v.IsValid() {
		x = v.Interface()
	}
	if e.err = enc.Encode(x); e.err == nil {
		_, e.err = e.w.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
	}
}

// field is a struct field as encoding/json writes it.
type field struct {
	index     []int
	key       string // the quoted name
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type -> []field

// fieldsOf lists t's fields as encoding/json names them: exported, renamed by their json
// tag, "-" left out. The structs an Encoder walks (those holding a Seq) embed none.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		if sf.Anonymous {
			panic(fmt.Sprintf("jsondoc: %s embeds %s: a document that streams embeds nothing", t, sf.Type))
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		key, _ := json.Marshal(name)
		out = append(out, field{index: sf.Index, key: string(key), omitEmpty: strings.Contains(","+opts+",", ",omitempty,")})
	}
	fieldCache.Store(t, out)
	return out
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

var streamsCache sync.Map // reflect.Type -> bool

// streams reports whether a value of type t may hold a Seq: those are written piece by piece.
// An interface may hold anything: it is looked into once it holds a value.
func streams(t reflect.Type) bool {
	if s, ok := streamsCache.Load(t); ok {
		return s.(bool)
	}
	s := holdsSeq(t, map[reflect.Type]bool{})
	streamsCache.Store(t, s)
	return s
}

func holdsSeq(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t.Implements(streamedType) {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsSeq(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() && holdsSeq(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
