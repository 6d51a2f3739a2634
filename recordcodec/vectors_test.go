package recordcodec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

type vector struct {
	name, layout          string
	line                  int
	key, value            []byte
	dumpKey, dumpPayload  string
	console, errSubstring string
	trailing              int
}

// loadVectors reads testdata/vectors.txt. A field may continue on following lines indented by
// two spaces.
func loadVectors(t testing.TB) []vector {
	t.Helper()
	f, err := os.Open("testdata/vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vector
	var cur *vector
	var lastField string
	fields := map[string]string{}
	flush := func() {
		if cur == nil {
			return
		}
		for name, src := range fields {
			switch name {
			case "layout":
				cur.layout = src
			case "key":
				cur.key = assemble(t, cur, src)
			case "value":
				if strings.TrimSpace(src) == "null" {
					cur.value = nil
				} else {
					cur.value = assemble(t, cur, src)
					if cur.value == nil {
						cur.value = []byte{}
					}
				}
			case "dumplog-key":
				cur.dumpKey = src
			case "dumplog-payload":
				cur.dumpPayload = src
			case "console":
				cur.console = src
			case "error":
				cur.errSubstring = src
			case "trailing":
				cur.trailing, _ = strconv.Atoi(src)
			default:
				t.Fatalf("vector %s (line %d): unknown field %q", cur.name, cur.line, name)
			}
		}
		if _, ok := fields["value"]; !ok {
			t.Fatalf("vector %s (line %d): no value", cur.name, cur.line)
		}
		out = append(out, *cur)
		fields = map[string]string{}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "#") || strings.TrimSpace(text) == "":
		case strings.HasPrefix(text, "=== "):
			flush()
			cur = &vector{name: strings.TrimPrefix(text, "=== "), line: line}
		case strings.HasPrefix(text, "  "):
			if cur == nil || lastField == "" {
				t.Fatalf("vectors.txt:%d: continuation line outside a field", line)
			}
			fields[lastField] += " " + strings.TrimSpace(text)
		default:
			name, val, ok := strings.Cut(text, ": ")
			if !ok || cur == nil {
				t.Fatalf("vectors.txt:%d: expected 'field: value'", line)
			}
			fields[name] = val
			lastField = name
		}
	}
	flush()
	return out
}

// assemble builds bytes from the token language described at the top of vectors.txt.
func assemble(t testing.TB, v *vector, src string) []byte {
	t.Helper()
	toks := tokenize(t, v, src)
	out, rest := assembleSeq(t, v, toks)
	if len(rest) != 0 {
		t.Fatalf("vector %s: unbalanced ')' in %q", v.name, src)
	}
	return out
}

func tokenize(t testing.TB, v *vector, src string) []string {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		default:
			j := i
			for j < len(src) && !unicode.IsSpace(rune(src[j])) && src[j] != '(' && src[j] != ')' {
				if src[j] == '"' { // a quoted string runs to its closing quote
					j++
					for j < len(src) && src[j] != '"' {
						if src[j] == '\\' {
							j++
						}
						j++
					}
					if j >= len(src) {
						t.Fatalf("vector %s: unterminated string in %q", v.name, src)
					}
				}
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		}
	}
	return toks
}

func assembleSeq(t testing.TB, v *vector, toks []string) ([]byte, []string) {
	var out []byte
	for len(toks) > 0 {
		tok := toks[0]
		toks = toks[1:]
		if tok == ")" {
			return out, toks
		}
		if tok == "b" || tok == "cb" || tok == "sized" {
			if len(toks) == 0 || toks[0] != "(" {
				t.Fatalf("vector %s: %s needs '('", v.name, tok)
			}
			var inner []byte
			inner, toks = assembleSeq(t, v, toks[1:])
			switch tok {
			case "b":
				out = binary.BigEndian.AppendUint32(out, uint32(len(inner)))
			case "cb":
				out = binary.AppendUvarint(out, uint64(len(inner))+1)
			case "sized":
				out = binary.AppendUvarint(out, uint64(len(inner)))
			}
			out = append(out, inner...)
			continue
		}
		out = append(out, assembleToken(t, v, tok)...)
	}
	return out, nil
}

func assembleToken(t testing.TB, v *vector, tok string) []byte {
	fail := func(err error) { t.Fatalf("vector %s: token %q: %v", v.name, tok, err) }
	num := func(s string, bits int) int64 {
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			fail(err)
		}
		return n
	}
	str := func(q string) string {
		s, err := strconv.Unquote(q)
		if err != nil {
			fail(err)
		}
		return s
	}
	prefix, arg, _ := strings.Cut(tok, ":")
	switch {
	case strings.HasPrefix(tok, `"`):
		return []byte(str(tok))
	case strings.HasPrefix(tok, `s"`):
		s := str(tok[1:])
		return append(binary.BigEndian.AppendUint16(nil, uint16(len(s))), s...)
	case strings.HasPrefix(tok, `c"`):
		s := str(tok[1:])
		return append(binary.AppendUvarint(nil, uint64(len(s))+1), s...)
	case tok == "s:null":
		return []byte{0xff, 0xff}
	case tok == "c:null", tok == "ca:null", tok == "cb:null":
		return []byte{0}
	case tok == "b:null":
		return []byte{0xff, 0xff, 0xff, 0xff}
	case prefix == "i8":
		return []byte{byte(num(arg, 8))}
	case prefix == "i16":
		return binary.BigEndian.AppendUint16(nil, uint16(num(arg, 16)))
	case prefix == "u16":
		n, err := strconv.ParseUint(arg, 10, 16)
		if err != nil {
			fail(err)
		}
		return binary.BigEndian.AppendUint16(nil, uint16(n))
	case prefix == "i32", prefix == "a":
		return binary.BigEndian.AppendUint32(nil, uint32(num(arg, 32)))
	case prefix == "i64":
		return binary.BigEndian.AppendUint64(nil, uint64(num(arg, 64)))
	case prefix == "uv":
		n, err := strconv.ParseUint(arg, 10, 32)
		if err != nil {
			fail(err)
		}
		return binary.AppendUvarint(nil, n)
	case prefix == "ca":
		return binary.AppendUvarint(nil, uint64(num(arg, 32))+1)
	case prefix == "x":
		b, err := hex.DecodeString(arg)
		if err != nil {
			fail(err)
		}
		return b
	case prefix == "uuid":
		u, err := ParseUUID(arg)
		if err != nil {
			fail(err)
		}
		return u[:]
	}
	fail(fmt.Errorf("unknown token"))
	return nil
}

func TestVectors(t *testing.T) {
	vectors := loadVectors(t)
	if len(vectors) < 60 {
		t.Fatalf("only %d vectors loaded", len(vectors))
	}
	seen := map[RecordType]map[int16]bool{}
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			d := Decoder{}
			if v.layout != "" {
				l, err := ParseLayout(v.layout)
				if err != nil {
					t.Fatal(err)
				}
				d.Layout = l
			}
			rec, err := d.Record(v.key, v.value)
			if v.errSubstring != "" {
				if err == nil {
					t.Fatalf("decoded without error, want %q", v.errSubstring)
				}
				if !strings.Contains(err.Error(), v.errSubstring) {
					t.Fatalf("error %q does not contain %q", err, v.errSubstring)
				}
				// Unknown types come back raw and re-encode unchanged.
				var ue *UnknownTypeError
				if errors.As(err, &ue) {
					k, val, encErr := Encode(rec)
					if encErr != nil || !bytes.Equal(k, v.key) || !bytes.Equal(val, v.value) {
						t.Errorf("unknown record does not re-encode raw: %x %x %v", k, val, encErr)
					}
				}
				return
			}
			var te *TrailingBytesError
			if v.trailing > 0 {
				if !errors.As(err, &te) || te.Count != v.trailing {
					t.Fatalf("error %v, want %d trailing bytes", err, v.trailing)
				}
			} else if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if rec.Tombstone() != (v.value == nil) {
				t.Fatalf("tombstone = %v for value %x", rec.Tombstone(), v.value)
			}
			if seen[rec.Key.Type] == nil {
				seen[rec.Key.Type] = map[int16]bool{}
			}
			if rec.Value != nil {
				seen[rec.Key.Type][rec.Value.ValueVersion()] = true
			}
			if v.dumpKey != "" {
				if got := string(AppendDumpLogKey(nil, rec.Key)); got != v.dumpKey {
					t.Errorf("dump-log key\n got %s\nwant %s", got, v.dumpKey)
				}
			}
			if v.dumpPayload != "" {
				if got := string(AppendDumpLogPayload(nil, rec.Value)); got != v.dumpPayload {
					t.Errorf("dump-log payload\n got %s\nwant %s", got, v.dumpPayload)
				}
			}
			if v.console != "" {
				if got := string(AppendConsoleJSON(nil, rec)); got != v.console {
					t.Errorf("console\n got %s\nwant %s", got, v.console)
				}
			}
			k, val, encErr := Encode(rec)
			if encErr != nil {
				t.Fatalf("encode: %v", encErr)
			}
			if !bytes.Equal(k, v.key) {
				t.Errorf("key re-encodes to\n %x\nwant\n %x", k, v.key)
			}
			want := v.value
			if v.trailing > 0 {
				want = want[:len(want)-v.trailing]
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
		})
	}
	// Every live type, and every value version of ids 1 and 2, has a vector.
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
