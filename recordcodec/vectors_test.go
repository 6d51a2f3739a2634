package recordcodec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

const vectorFiles = "testdata/vectors/*.txt"

// vector is one decode case, as the tests, fuzz seeds and benchmarks use it.
type vector struct {
	name       string // file:line of the directive
	layout     Layout
	console    bool
	key, value []byte
}

// TestVectors runs the codec vectors, testdata/vectors/*.txt (one file per record family), with
// github.com/cockroachdb/datadriven. Each case is a decode directive whose input is the record's
// key and value as annotated hex:
//
//	decode [layout=4.0|3.9|streams-preview] [console]
//	key:
//	0001              # type 1 (OffsetCommit)
//	0002 6731         # group "g1"
//	...
//	value:            ("value: null" for a tombstone; "value:" with no bytes is an empty value)
//	0004              # version 4
//	...
//	----
//	key: {"type":"1","data":{...}}          kafka-dump-log --offsets-decoder's key
//	payload: {"version":"4","data":{...}}   and payload (<DELETE> for a tombstone)
//	console: {"key":{...},"value":{...}}    the console formatters' form (with the console argument)
//
// In the hex, '#' starts a comment and spaces and indentation are ignored. A record that does not
// decode prints "error: ..." instead; a value with trailing bytes prints the error and then the
// record, which Kafka reads. Beyond the output, each case checks that the decoded record
// re-encodes to its own bytes (without the trailing bytes; an unknown type keeps its raw bytes),
// that the tombstone flag follows the value, and that the aliasing (NoCopy) decoder gives the
// same record. Layout defaults to 4.1+.
//
// Run `go test ./recordcodec -run TestVectors -rewrite` to regenerate the outputs, and review
// the diff against what Kafka prints.
func TestVectors(t *testing.T) {
	files, err := filepath.Glob(vectorFiles)
	if err != nil || len(files) == 0 {
		t.Fatalf("no vector files %s (%v)", vectorFiles, err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				switch td.Cmd {
				case "decode":
					v, err := parseVector(td.Pos, td.CmdArgs, td.Input)
					if err != nil {
						td.Fatalf(t, "%v", err)
					}
					return runVector(t, v)
				default:
					td.Fatalf(t, "unknown directive %q", td.Cmd)
					return ""
				}
			})
		})
	}
}

// runVector decodes one vector, checks what does not show in the output and returns the output.
func runVector(t *testing.T, v vector) string {
	var out strings.Builder
	d := Decoder{Layout: v.layout}
	rec, err := d.Record(v.key, v.value)
	if err != nil {
		fmt.Fprintf(&out, "error: %v\n", err)
	}
	var ue *UnknownTypeError
	var te *TrailingBytesError
	switch {
	case errors.As(err, &ue):
		// Unknown types come back raw and re-encode unchanged.
		k, val, encErr := Encode(rec)
		if encErr != nil || !bytes.Equal(k, v.key) || !bytes.Equal(val, v.value) {
			t.Errorf("unknown record does not re-encode raw: %x %x %v", k, val, encErr)
		}
		return out.String()
	case errors.As(err, &te) && te.Part == "value":
		// Complete: Kafka reads the record and ignores the trailing bytes.
	case err != nil:
		return out.String()
	}
	if rec.Tombstone() != (v.value == nil) {
		t.Errorf("tombstone = %v for value %x", rec.Tombstone(), v.value)
	}
	fmt.Fprintf(&out, "key: %s\n", AppendDumpLogKey(nil, rec.Key))
	fmt.Fprintf(&out, "payload: %s\n", AppendDumpLogPayload(nil, rec.Value))
	if v.console {
		fmt.Fprintf(&out, "console: %s\n", AppendConsoleJSON(nil, rec))
	}

	k, val, encErr := Encode(rec)
	if encErr != nil {
		t.Fatalf("encode: %v", encErr)
	}
	if !bytes.Equal(k, v.key) {
		t.Errorf("key re-encodes to\n %x\nwant\n %x", k, v.key)
	}
	want := v.value
	if te != nil {
		want = want[:te.Pos]
	}
	if !bytes.Equal(val, want) || (val == nil) != (want == nil) {
		t.Errorf("value re-encodes to\n %x\nwant\n %x", val, want)
	}
	// Aliasing decode gives the same record.
	rec2, err2 := Decoder{Layout: d.Layout, NoCopy: true}.Record(v.key, v.value)
	if (err2 == nil) != (err == nil) {
		t.Fatalf("NoCopy decode error %v, copying decode error %v", err2, err)
	}
	if got, want := string(AppendConsoleJSON(nil, rec2)), string(AppendConsoleJSON(nil, rec)); got != want {
		t.Errorf("NoCopy decode differs:\n%s\n%s", got, want)
	}
	return out.String()
}

// TestVectorsCoverVersions: every live type, and every value version of ids 1 and 2, has a
// vector that decodes.
func TestVectorsCoverVersions(t *testing.T) {
	vectors := loadVectors(t)
	if len(vectors) < 60 {
		t.Fatalf("only %d vectors loaded", len(vectors))
	}
	seen := map[RecordType]map[int16]bool{}
	for _, v := range vectors {
		rec, err := Decoder{Layout: v.layout}.Record(v.key, v.value)
		var te *TrailingBytesError
		if rec.Value == nil || (err != nil && !(errors.As(err, &te) && te.Part == "value")) {
			continue
		}
		if _, raw := rec.Value.(*RawValue); raw {
			continue
		}
		if seen[rec.Key.Type] == nil {
			seen[rec.Key.Type] = map[int16]bool{}
		}
		seen[rec.Key.Type][rec.Value.ValueVersion()] = true
	}
	for typ := RecordType(0); typ <= 23; typ++ {
		lo, hi, ok := ValueVersions(typ, LayoutCurrent)
		if !ok {
			continue
		}
		for ver := lo; ver <= hi; ver++ {
			if !seen[typ][ver] {
				t.Errorf("no vector decodes type %d (%s) value version %d", typ, typ, ver)
			}
		}
	}
}

// parseVector reads a decode directive's arguments and annotated hex.
func parseVector(pos string, args []datadriven.CmdArg, input string) (vector, error) {
	v := vector{name: pos}
	for _, a := range args {
		switch {
		case a.Key == "layout" && len(a.Vals) == 1:
			l, err := ParseLayout(a.Vals[0])
			if err != nil {
				return v, err
			}
			v.layout = l
		case a.Key == "console" && len(a.Vals) == 0:
			v.console = true
		default:
			return v, fmt.Errorf("decode: unknown argument %s", a)
		}
	}
	var cur *[]byte
	var haveKey, haveValue bool
	for i, line := range strings.Split(input, "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case line == "key:":
			if haveKey {
				return v, fmt.Errorf("input line %d: a second key", i+1)
			}
			haveKey, v.key, cur = true, []byte{}, &v.key
		case line == "value:" || line == "value: null":
			if haveValue {
				return v, fmt.Errorf("input line %d: a second value", i+1)
			}
			haveValue, cur = true, nil
			if line == "value:" {
				v.value, cur = []byte{}, &v.value
			}
		default:
			if cur == nil {
				return v, fmt.Errorf("input line %d: bytes outside key: or value: (or after value: null)", i+1)
			}
			b, err := hex.DecodeString(strings.Join(strings.Fields(line), ""))
			if err != nil {
				return v, fmt.Errorf("input line %d: %v", i+1, err)
			}
			*cur = append(*cur, b...)
		}
	}
	if !haveKey || !haveValue {
		return v, fmt.Errorf("decode needs a key: and a value: section")
	}
	return v, nil
}

// loadVectors reads every decode case of testdata/vectors without running it (for the fuzz
// seeds, the benchmarks and the coverage test). The datadriven syntax is simple enough here:
// a directive line, its input up to "----", then the expected output up to a blank line (or
// between "----" lines when it contains blank lines).
func loadVectors(tb testing.TB) []vector {
	tb.Helper()
	files, err := filepath.Glob(vectorFiles)
	if err != nil || len(files) == 0 {
		tb.Fatalf("no vector files %s (%v)", vectorFiles, err)
	}
	var out []vector
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			line := strings.TrimSpace(lines[i])
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			pos := fmt.Sprintf("%s:%d", path, i+1)
			cmd, args, err := datadriven.ParseLine(line)
			if err != nil || cmd != "decode" {
				tb.Fatalf("%s: want a decode directive, got %q (%v)", pos, line, err)
			}
			start := i + 1
			for i++; i < len(lines) && lines[i] != "----"; i++ {
			}
			v, err := parseVector(pos, args, strings.Join(lines[start:min(i, len(lines))], "\n"))
			if err != nil {
				tb.Fatalf("%s: %v", pos, err)
			}
			out = append(out, v)
			// Skip the expected output.
			if i+1 < len(lines) && lines[i+1] == "----" {
				for i += 2; i+1 < len(lines) && !(lines[i] == "----" && lines[i+1] == "----"); i++ {
				}
				i++
			} else {
				for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				}
			}
		}
	}
	return out
}
