package recordcodec

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// jsonWriter writes compact JSON the way Jackson's ObjectNode.toString does, which is what
// kafka-dump-log and the console formatters print: no spaces, fields in schema order, UTF-8
// output with only '"', '\\' and control characters escaped.
type jsonWriter struct {
	b []byte
	// stack holds, per open object or array, whether it already has an element.
	stack    []bool
	afterKey bool
	// expandConsumer makes the subscription and assignment bytes of classic group members
	// print as parsed ConsumerProtocol messages (kafka-dump-log's --offsets-decoder does this
	// for protocolType "consumer").
	expandConsumer bool
}

func (w *jsonWriter) value() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if n := len(w.stack); n > 0 {
		if w.stack[n-1] {
			w.b = append(w.b, ',')
		} else {
			w.stack[n-1] = true
		}
	}
}

func (w *jsonWriter) openObject() {
	w.value()
	w.b = append(w.b, '{')
	w.stack = append(w.stack, false)
}

func (w *jsonWriter) closeObject() {
	w.stack = w.stack[:len(w.stack)-1]
	w.b = append(w.b, '}')
}

func (w *jsonWriter) openArray() {
	w.value()
	w.b = append(w.b, '[')
	w.stack = append(w.stack, false)
}

func (w *jsonWriter) closeArray() {
	w.stack = w.stack[:len(w.stack)-1]
	w.b = append(w.b, ']')
}

func (w *jsonWriter) key(k string) {
	w.value()
	w.b = appendJSONString(w.b, k)
	w.b = append(w.b, ':')
	w.afterKey = true
}

func (w *jsonWriter) null() {
	w.value()
	w.b = append(w.b, "null"...)
}

func (w *jsonWriter) int(v int64) {
	w.value()
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *jsonWriter) string(s string) {
	w.value()
	w.b = appendJSONString(w.b, s)
}

func (w *jsonWriter) uuid(u UUID) {
	w.value()
	w.b = append(w.b, '"')
	w.b = base64.RawURLEncoding.AppendEncode(w.b, u[:])
	w.b = append(w.b, '"')
}

func (w *jsonWriter) bytes(v []byte) {
	w.value()
	w.b = append(w.b, '"')
	w.b = base64.StdEncoding.AppendEncode(w.b, v)
	w.b = append(w.b, '"')
}

// raw appends a preformatted JSON token.
func (w *jsonWriter) raw(s string) {
	w.value()
	w.b = append(w.b, s...)
}

const hexDigits = "0123456789ABCDEF"

// AppendJSONString appends s as a JSON string, escaped as Jackson escapes it.
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }

// appendJSONString quotes s as Jackson does. Kafka decodes strings from UTF-8 with Java's
// replacing decoder, so invalid bytes print as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b = append(b, '\\', '"')
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// AppendDumpLogKey appends the key as kafka-dump-log --offsets-decoder prints it:
// {"type":"<id>","data":{...}} with the type as a string.
func AppendDumpLogKey(dst []byte, k Key) []byte {
	w := jsonWriter{b: dst}
	w.openObject()
	w.key("type")
	w.string(strconv.Itoa(int(k.Type)))
	w.key("data")
	k.writeJSON(&w)
	w.closeObject()
	return w.b
}

// AppendDumpLogPayload appends the value as kafka-dump-log --offsets-decoder prints it:
// {"version":"<v>","data":{...}}, or <DELETE> for a tombstone. The members of a classic group
// with protocol type "consumer" show their subscription and assignment parsed.
func AppendDumpLogPayload(dst []byte, v Value) []byte {
	if v == nil {
		return append(dst, "<DELETE>"...)
	}
	w := jsonWriter{b: dst}
	if g, ok := v.(*GroupMetadataValue); ok && g.ProtocolType == "consumer" {
		w.expandConsumer = true
	}
	w.openObject()
	w.key("version")
	w.string(strconv.Itoa(int(v.ValueVersion())))
	w.key("data")
	v.writeJSONBody(&w)
	w.closeObject()
	return w.b
}

// AppendConsoleJSON appends the record in the shape of Kafka's console-consumer formatters
// (OffsetsMessageFormatter, GroupMetadataMessageFormatter): numeric type and version, a null
// value for a tombstone, member bytes left as base64. Unlike those formatters it renders every
// record type; callers filter.
func AppendConsoleJSON(dst []byte, r Record) []byte {
	w := jsonWriter{b: dst}
	w.openObject()
	w.key("key")
	w.openObject()
	w.key("type")
	w.int(int64(r.Key.Type))
	w.key("data")
	r.Key.writeJSON(&w)
	w.closeObject()
	w.key("value")
	if r.Value == nil {
		w.null()
	} else {
		w.openObject()
		w.key("version")
		w.int(int64(r.Value.ValueVersion()))
		w.key("data")
		r.Value.writeJSONBody(&w)
		w.closeObject()
	}
	w.closeObject()
	return w.b
}

// AppendKeyDataJSON appends only the key's data object.
func AppendKeyDataJSON(dst []byte, k Key) []byte {
	w := jsonWriter{b: dst}
	k.writeJSON(&w)
	return w.b
}

// AppendValueDataJSON appends only the value's data object; expandConsumer parses consumer
// protocol member bytes as the dump-log style does.
func AppendValueDataJSON(dst []byte, v Value, expandConsumer bool) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	w := jsonWriter{b: dst}
	if g, ok := v.(*GroupMetadataValue); ok && expandConsumer && g.ProtocolType == "consumer" {
		w.expandConsumer = true
	}
	v.writeJSONBody(&w)
	return w.b
}

func jsonConsumerSubscription(w *jsonWriter, b []byte) {
	if w.expandConsumer {
		if s, err := DecodeConsumerSubscription(b); err == nil {
			s.writeJSON(w, s.Version)
			return
		}
	}
	w.bytes(b)
}

func jsonConsumerAssignment(w *jsonWriter, b []byte) {
	if w.expandConsumer {
		if a, err := DecodeConsumerAssignment(b); err == nil {
			a.writeJSON(w, a.Version)
			return
		}
	}
	w.bytes(b)
}
