package jsondoc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

type inner struct {
	Name  string   `json:"name"`
	Tags  []string `json:"tags,omitempty"`
	Note  *string  `json:"note"`
	Empty struct{} `json:"empty"`
}

type part struct {
	ID      int         `json:"id"`
	Skipped string      `json:"skipped,omitempty"`
	Items   Seq[inner]  `json:"items"`
	None    Seq[int]    `json:"none"`
	Nil     Seq[string] `json:"nil"`
	After   []int       `json:"after,omitempty"`
	Hidden  int         `json:"-"`
	hidden  int
}

type document struct {
	Version int            `json:"schemaVersion"`
	Parts   []part         `json:"parts"`
	NoParts []part         `json:"noParts"`
	Nil     []part         `json:"nilParts"`
	Ptr     *part          `json:"ptr"`
	NilPtr  *part          `json:"nilPtr,omitempty"`
	HTML    string         `json:"html"`
	Map     map[string]int `json:"map"`
}

func seqOf[T any](vs ...T) Seq[T] {
	return func(yield func(T) bool) {
		for _, v := range vs {
			if !yield(v) {
				return
			}
		}
	}
}

// TestEncoderEqualsEncodingJSON: a document with streamed lists at several depths, empty and
// nil ones, omitted fields and HTML characters is written byte for byte as json.Encoder
// writes it with two-space indentation, HTML escaping on and off.
func TestEncoderEqualsEncodingJSON(t *testing.T) {
	note := "a <b> & c"
	doc := document{
		Version: 1,
		Parts: []part{
			{ID: 1, Items: seqOf(inner{Name: "x", Tags: []string{"a", "b"}}, inner{Name: "y<>", Note: &note}), None: seqOf[int](), After: []int{1}},
			{ID: 2, Skipped: "s", Items: seqOf[inner](), Hidden: 7, hidden: 8},
		},
		NoParts: []part{},
		Ptr:     &part{ID: 3, Items: seqOf(inner{Name: "z"})},
		HTML:    "<html> & </html>",
		Map:     map[string]int{"b": 2, "a": 1},
	}
	for _, escape := range []bool{true, false} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(escape)
		require.NoError(t, enc.Encode(doc))
		e := NewEncoder(&got)
		e.SetEscapeHTML(escape)
		require.NoError(t, e.Encode(doc))
		require.Equal(t, want.String(), got.String(), "escape HTML %v", escape)
		require.NoError(t, e.Encode(&doc), "a pointer to a document")
	}
}

// TestEncoderStreams: the encoder asks a Seq for its elements only while it writes them, and
// stops asking once writing fails.
func TestEncoderStreams(t *testing.T) {
	produced := 0
	items := Seq[inner](func(yield func(inner) bool) {
		for i := 0; i < 1000; i++ {
			produced++
			if !yield(inner{Name: "n"}) {
				return
			}
		}
	})
	w := &failAfter{n: 1 << 10}
	err := NewEncoder(w).Encode(part{Items: items})
	require.Error(t, err)
	require.Less(t, produced, 1000, "the encoder stopped asking once the writer failed")
}

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errFull
	}
	return len(p), nil
}

var errFull = errorString("full")

type errorString string

func (e errorString) Error() string { return string(e) }
