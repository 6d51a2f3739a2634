// Command gen turns schema.txt, coordlog's table of __consumer_offsets record types and value
// schemas, into Go: the record types (constants, names, key shapes, which ids each layout
// decodes and each Kafka release knows and replays) and the typed value structs of package
// recordcodec with their decoders, encoders and JSON writers (recordcodec/zz_generated.go), and
// the record-type ids and Kafka-version rules of package groupstate
// (groupstate/zz_recordtypes.go), which may not import recordcodec.
//
// Run it with `go generate ./recordcodec` (see the go:generate line in recordcodec/codec.go);
// recordcodec's TestGeneratedCodeIsCurrent fails when the committed files differ from what it
// writes. The generated code relies on the hand-written wire primitives in recordcodec/wire.go
// and the JSON writer in recordcodec/json.go.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
)

// vrange is an inclusive range of versions; hi == maxVersion means "and every later version".
type vrange struct {
	lo, hi int
	none   bool
}

const maxVersion = 1 << 14

func parseRange(s string) vrange {
	switch {
	case s == "none" || s == "":
		return vrange{none: true}
	case strings.HasSuffix(s, "+"):
		return vrange{lo: atoi(strings.TrimSuffix(s, "+")), hi: maxVersion}
	case strings.Contains(s, "-"):
		p := strings.SplitN(s, "-", 2)
		return vrange{lo: atoi(p[0]), hi: atoi(p[1])}
	default:
		v := atoi(s)
		return vrange{lo: v, hi: v}
	}
}

func (r vrange) covers(o vrange) bool {
	if r.none {
		return o.none
	}
	return r.lo <= o.lo && r.hi >= o.hi
}

func (r vrange) intersects(o vrange) bool {
	return !r.none && !o.none && r.lo <= o.hi && o.lo <= r.hi
}

// cond returns the Go condition "version is in r" within the message's valid versions.
func (r vrange) cond(valid vrange) string {
	if r.none {
		return "false"
	}
	if r.covers(valid) {
		return "true"
	}
	if r.lo == r.hi {
		return fmt.Sprintf("version == %d", r.lo)
	}
	var parts []string
	if r.lo > valid.lo {
		parts = append(parts, fmt.Sprintf("version >= %d", r.lo))
	}
	if r.hi < valid.hi {
		parts = append(parts, fmt.Sprintf("version <= %d", r.hi))
	}
	if len(parts) == 0 {
		return "true"
	}
	return strings.Join(parts, " && ")
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		log.Fatalf("bad number %q", s)
	}
	return n
}

type field struct {
	name      string // as in the schema (Kafka's name)
	typ       string // schema type, e.g. int32, []TaskIds, Endpoint
	versions  vrange
	nullable  vrange
	tag       int // -1 when not tagged
	def       string
	ignorable bool
	hook      string
	goAlias   string
	gsName    string // the groupstate field's name (default gsFieldName's rule), "-" for none
	line      int
}

func (f *field) goName() string {
	if f.goAlias != "" {
		return f.goAlias
	}
	return strings.ToUpper(f.name[:1]) + f.name[1:]
}

func (f *field) jsonName() string {
	return strings.ToLower(f.name[:1]) + f.name[1:]
}

func (f *field) isArray() bool { return strings.HasPrefix(f.typ, "[]") }
func (f *field) elem() string  { return strings.TrimPrefix(f.typ, "[]") }

func isPrimitive(t string) bool {
	switch t {
	case "int8", "int16", "int32", "int64", "uint16", "uuid", "string", "bytes":
		return true
	}
	return false
}

type structDef struct {
	name   string
	fields []*field
	model  modelType // the groupstate type replay converts it into (model.go)
}

type message struct {
	kind     string // value or data
	id       int
	name     string
	valid    vrange
	flexible vrange
	layout   string
	body     *structDef
	replay   replayRule // how replay applies the value (model.go)
	fast     bool       // a fast decoder is written for it (fast.go)
}

// recordType is one `record` line: an id of the key's int16 prefix.
type recordType struct {
	id     int
	name   string
	key    string // offset, group, groupid, member, regex
	kafka  vrange // Kafka 4.x minor versions whose serde knows the id
	replay vrange // those whose shard replays it
}

type schema struct {
	records  []*recordType
	structs  map[string]*structDef
	order    []string // struct names in definition order
	messages []*message
	// parent maps a struct to the message that owns it (for version ranges of nested structs);
	// shared structs are used only by messages whose versions are all 0.
	owner map[string]*message
}

func parse(path string) *schema {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	s := &schema{structs: map[string]*structDef{}, owner: map[string]*message{}}
	// stack[i] is the struct receiving fields at indentation level i+1.
	var stack []*structDef
	var cur *message
	sc := bufio.NewScanner(f)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		raw := sc.Text()
		if strings.TrimSpace(raw) == "" || strings.HasPrefix(strings.TrimSpace(raw), "#") {
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " "))
		if indent%2 != 0 {
			log.Fatalf("schema.txt:%d: odd indentation", lineNo)
		}
		level := indent / 2
		words := strings.Fields(raw)
		if level == 0 {
			stack, cur = s.parseDeclaration(words, lineNo)
			continue
		}
		if level > len(stack) {
			log.Fatalf("schema.txt:%d: field indented too far", lineNo)
		}
		stack = stack[:level]
		if st := s.parseField(stack[level-1], cur, words, lineNo); st != nil {
			stack = append(stack, st)
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	return s
}

// parseDeclaration reads a line at indentation 0 (struct, record, value, data) and returns
// the struct that receives the fields that follow (none for a record line) and the message
// being declared.
func (s *schema) parseDeclaration(words []string, lineNo int) ([]*structDef, *message) {
	switch words[0] {
	case "struct":
		st := s.addStruct(words[1], lineNo)
		parseModelOptions(&st.model, nil, words[2:], lineNo)
		return []*structDef{st}, nil
	case "record":
		s.parseRecord(words, lineNo)
		return nil, nil
	case "value", "data":
		m := &message{kind: words[0]}
		rest := words[1:]
		if m.kind == "value" {
			m.id = atoi(rest[0])
			rest = rest[1:]
		}
		m.name, m.valid, m.flexible = rest[0], parseRange(rest[1]), parseRange(rest[2])
		rest = rest[3:]
		if len(rest) > 0 && !strings.Contains(rest[0], "=") && rest[0] != "unwrap" && rest[0] != "fast" {
			m.layout, rest = rest[0], rest[1:]
		}
		if i := slices.Index(rest, "fast"); i >= 0 {
			m.fast, rest = true, slices.Delete(rest, i, i+1)
		}
		m.body = s.addStruct(m.name, lineNo)
		parseModelOptions(&m.body.model, &m.replay, rest, lineNo)
		s.owner[m.name] = m
		s.messages = append(s.messages, m)
		return []*structDef{m.body}, m
	}
	log.Fatalf("schema.txt:%d: unknown declaration %q", lineNo, words[0])
	return nil, nil
}

func (s *schema) parseRecord(words []string, lineNo int) {
	rt := &recordType{id: atoi(words[1]), name: words[2], key: words[3], kafka: parseRange("0+")}
	replaySet := false
	for _, opt := range words[4:] {
		k, v, _ := strings.Cut(opt, "=")
		switch k {
		case "kafka":
			rt.kafka = parseRange(v)
		case "replay":
			rt.replay, replaySet = parseRange(v), true
		default:
			log.Fatalf("schema.txt:%d: unknown record option %q", lineNo, opt)
		}
	}
	if !replaySet {
		rt.replay = rt.kafka
	}
	switch rt.key {
	case "offset", "group", "groupid", "member", "regex":
	default:
		log.Fatalf("schema.txt:%d: unknown key shape %q", lineNo, rt.key)
	}
	if rt.id != len(s.records) {
		log.Fatalf("schema.txt:%d: record %d out of order (want %d: ids are dense)", lineNo, rt.id, len(s.records))
	}
	s.records = append(s.records, rt)
}

// parseField adds a field line to parent and returns the inline struct it opens, if any.
func (s *schema) parseField(parent *structDef, cur *message, words []string, lineNo int) *structDef {
	fd := &field{name: words[0], typ: words[1], versions: parseRange(words[2]), tag: -1, nullable: vrange{none: true}, line: lineNo}
	var model modelType
	for _, opt := range words[3:] {
		k, v, _ := strings.Cut(opt, "=")
		switch k {
		case "null":
			fd.nullable = parseRange(v)
		case "tag":
			fd.tag = atoi(v)
		case "default":
			fd.def = v
		case "ignorable":
			fd.ignorable = true
		case "json":
			fd.hook = v
		case "go":
			fd.goAlias = v
		case "gs":
			fd.gsName = v
		case "in", "model":
			parseModelOptions(&model, nil, []string{opt}, lineNo)
		default:
			log.Fatalf("schema.txt:%d: unknown option %q", lineNo, opt)
		}
	}
	parent.fields = append(parent.fields, fd)
	// A field whose type is not primitive and not yet known opens an inline struct.
	et := fd.elem()
	if isPrimitive(et) {
		return nil
	}
	if _, ok := s.structs[et]; ok {
		if model.name != "" {
			log.Fatalf("schema.txt:%d: %s is declared before: name its groupstate type there", lineNo, et)
		}
		return nil
	}
	st := s.addStruct(et, lineNo)
	st.model = model
	if cur != nil {
		s.owner[et] = cur
	}
	return st
}

func (s *schema) addStruct(name string, line int) *structDef {
	if _, dup := s.structs[name]; dup {
		log.Fatalf("schema.txt:%d: struct %s defined twice", line, name)
	}
	st := &structDef{name: name}
	s.structs[name] = st
	s.order = append(s.order, name)
	return st
}

type gen struct {
	s   *schema
	buf bytes.Buffer
}

func (g *gen) p(format string, args ...any) {
	fmt.Fprintf(&g.buf, format, args...)
	g.buf.WriteByte('\n')
}

// validOf is the version range a struct is read at: its message's valid versions, or version 0
// for shared structs (every message using them has only version 0).
func (g *gen) validOf(st *structDef) vrange {
	if m, ok := g.s.owner[st.name]; ok {
		return m.valid
	}
	return vrange{lo: 0, hi: 0}
}

func (g *gen) goType(f *field) string {
	et := f.elem()
	var base string
	switch et {
	case "uuid":
		base = "UUID"
	case "bytes":
		base = "[]byte"
	case "int8", "int16", "int32", "int64", "uint16", "string":
		base = et
	default:
		base = et
	}
	if f.isArray() {
		return "[]" + base
	}
	if !f.nullable.none {
		switch et {
		case "string":
			return "*string"
		case "bytes":
			return "[]byte"
		default:
			if !isPrimitive(et) {
				return "*" + base
			}
		}
	}
	return base
}

// defaultExpr is the Go value of the field's default.
func (g *gen) defaultExpr(f *field) string {
	if f.isArray() {
		if !f.nullable.none && f.def != "null" {
			return g.goType(f) + "{}" // Kafka's default: the empty array, not null
		}
		return "nil"
	}
	if f.typ == "bytes" {
		return "nil"
	}
	switch f.typ {
	case "string":
		if !f.nullable.none && (f.def == "null") {
			return "nil"
		}
		if !f.nullable.none {
			return "nil"
		}
		return `""`
	case "uuid":
		return "UUID{}"
	case "int8", "int16", "int32", "int64", "uint16":
		if f.def == "" {
			return "0"
		}
		return f.def
	}
	if !f.nullable.none {
		if f.def != "null" {
			return "new" + f.typ + "()" // Kafka's default: the empty struct, not null
		}
		return "nil"
	}
	return f.typ + "{}"
}

// isDefaultExpr is a Go expression that is true when the field equals its default.
func (g *gen) isDefaultExpr(f *field, v string) string {
	if f.isArray() {
		if !f.nullable.none {
			if f.def != "null" {
				return v + " != nil && len(" + v + ") == 0"
			}
			return v + " == nil"
		}
		return "len(" + v + ") == 0"
	}
	switch f.typ {
	case "bytes":
		if !f.nullable.none {
			return v + " == nil"
		}
		return "len(" + v + ") == 0"
	case "string":
		if !f.nullable.none {
			return v + " == nil"
		}
		return v + ` == ""`
	case "uuid":
		return v + " == (UUID{})"
	case "int8", "int16", "int32", "int64", "uint16":
		return v + " == " + g.defaultExpr(f)
	}
	if !f.nullable.none {
		if f.def != "null" {
			return v + " != nil && " + v + ".isDefault()"
		}
		return v + " == nil"
	}
	return v + ".isDefault()"
}

func (g *gen) nullableCond(f *field, valid vrange) string {
	if f.nullable.none {
		return "false"
	}
	return f.nullable.cond(valid)
}

func (g *gen) hasFlexible(st *structDef) bool {
	if m, ok := g.s.owner[st.name]; ok {
		return !m.flexible.none
	}
	// shared structs are only used by flexible v0 messages, except none: check users.
	return true
}

func (g *gen) run() {
	g.p("// Code generated by recordcodec/internal/gen from schema.txt; DO NOT EDIT.")
	g.p("")
	g.p("package recordcodec")
	g.p("")
	g.genRecordTypes()
	for _, name := range g.s.order {
		g.genStruct(g.s.structs[name])
	}
	g.genRegistry()
}

func (g *gen) flexExpr(st *structDef) string {
	return "flex"
}

// genStruct writes a struct of the schema with its defaults, reader, writer and JSON writer.
func (g *gen) genStruct(st *structDef) {
	m := g.s.owner[st.name]
	isTop := m != nil && m.body == st
	valid := g.validOf(st)
	flexible := g.hasFlexible(st)
	g.genType(st, m, isTop, flexible)
	g.genDefaults(st, flexible)
	g.genRead(st, valid, flexible)
	g.genAppend(st, valid, flexible)
	g.genJSON(st, valid)
}

// genType writes the struct type.
func (g *gen) genType(st *structDef, m *message, isTop, flexible bool) {
	if isTop && m.kind == "value" {
		layout := "the layout of Kafka 4.1 to 4.4"
		if m.layout != "" {
			layout = "the layout " + m.layout + " (see Layout)"
		}
		g.p("// %s is the value of record type %d (versions %s), in %s.", st.name, m.id, rangeText(m.valid), layout)
	} else if isTop {
		g.p("// %s is a versioned message (versions %s) carried inside other records.", st.name, rangeText(m.valid))
	} else {
		g.p("// %s is a struct of the %s schema.", st.name, ownerName(g.s, st))
	}
	g.p("type %s struct {", st.name)
	if isTop {
		g.p("Version int16 // the value version, the int16 prefix on the wire")
	}
	for _, f := range st.fields {
		g.p("%s %s // %s, versions %s%s", f.goName(), g.goType(f), f.typ, rangeText(f.versions), fieldNote(f))
	}
	for _, f := range st.fields {
		if g.isNewDefault(f) {
			g.p("// spare%s keeps the memory of %s while it is null, for DecodeInto to reuse.", f.goName(), f.goName())
			g.p("spare%s %s", f.goName(), g.goType(f))
		}
	}
	if flexible {
		g.p("// UnknownTags holds tagged fields this schema does not know, in ascending tag order,")
		g.p("// re-emitted as read.")
		g.p("UnknownTags []RawTag")
		g.p("// presentTags marks known tagged fields that were on the wire even though they held")
		g.p("// their default value, so that they are re-emitted byte for byte.")
		g.p("presentTags uint64")
	}
	g.p("}")
	g.p("")
}

// genDefaults writes setDefaults, the constructor and isDefault.
func (g *gen) genDefaults(st *structDef, flexible bool) {
	g.p("// setDefaults sets every field to its schema default.")
	g.p("func (s *%s) setDefaults() {", st.name)
	for _, f := range st.fields {
		g.p("s.%s = %s", f.goName(), g.defaultExpr(f))
	}
	g.p("}")
	g.p("")

	g.p("func new%s() *%s { s := &%s{}; s.setDefaults(); return s }", st.name, st.name, st.name)
	g.p("")
	if g.defaultsToNew(st.name) {
		g.p("// reset makes s equal to new%s() in place.", st.name)
		g.p("func (s *%s) reset() {", st.name)
		g.p("s.setDefaults()")
		if flexible {
			g.p("s.UnknownTags = nil")
			g.p("s.presentTags = 0")
		}
		g.p("}")
		g.p("")
	}
	g.p("// isDefault reports whether every field holds its default (Kafka's equals against a new struct).")
	g.p("func (s *%s) isDefault() bool {", st.name)
	var conds []string
	for _, f := range st.fields {
		conds = append(conds, "("+g.isDefaultExpr(f, "s."+f.goName())+")")
	}
	if flexible {
		conds = append(conds, "len(s.UnknownTags) == 0")
	}
	if len(conds) == 0 {
		conds = []string{"true"}
	}
	g.p("return %s", strings.Join(conds, " && \n"))
	g.p("}")
	g.p("")
}

// genRead writes the reader: untagged fields in order, then the tagged fields of flexible
// versions (unknown tags kept raw).
func (g *gen) genRead(st *structDef, valid vrange, flexible bool) {
	g.p("func (s *%s) read(r *reader, version int16, flex bool) {", st.name)
	for _, f := range st.fields {
		if f.tag >= 0 && g.isNewDefault(f) {
			// Take the field's memory back (the reader overwrites it when the tag comes, and
			// resets it to the default after the tags when it does not).
			dst := "s." + f.goName()
			g.p("if %s == nil { %s, %s = %s, nil }", dst, dst, spareOf(dst), spareOf(dst))
			g.p("if %s == nil { %s = new(%s) }", dst, dst, f.typ)
			continue
		}
		if f.tag >= 0 {
			g.readDefault(f, "s."+f.goName())
			continue
		}
		c := f.versions.cond(valid)
		if c == "true" {
			g.readField(f, valid, "s."+f.goName(), false)
		} else {
			g.p("if %s {", c)
			g.readField(f, valid, "s."+f.goName(), false)
			g.p("} else {")
			g.readDefault(f, "s."+f.goName())
			g.p("}")
		}
	}
	if flexible {
		// Reset for every version: a value decoded into again (DecodeInto) may hold the
		// tags of an earlier, flexible decode.
		g.p("s.UnknownTags = nil")
		g.p("s.presentTags = 0")
		g.p("if flex {")
		g.p("n := r.tagCount()")
		g.p("last := -1")
		g.p("for i := 0; i < n && r.err == nil; i++ {")
		g.p("tag, size := r.tagHeader(&last)")
		g.p("if r.err != nil { return }")
		g.p("end := r.off + size")
		g.p("switch tag {")
		for _, f := range st.fields {
			if f.tag < 0 {
				continue
			}
			g.p("case %d:", f.tag)
			g.readField(f, valid, "s."+f.goName(), true)
			g.p("s.presentTags |= 1 << %d", f.tag)
		}
		g.p("default:")
		g.p("s.UnknownTags = append(s.UnknownTags, RawTag{Tag: uint32(tag), Data: r.raw(size)})")
		g.p("}")
		g.p("r.endTag(end, size, tag)")
		g.p("}")
		g.p("}")
		for _, f := range st.fields {
			if f.tag >= 0 && g.isNewDefault(f) {
				g.p("if s.presentTags&(1<<%d) == 0 { s.%s.reset() }", f.tag, f.goName())
			}
		}
	}
	g.p("}")
	g.p("")
}

// genAppend writes the encoder: known tagged fields and unknown tags are merged in tag order.
func (g *gen) genAppend(st *structDef, valid vrange, flexible bool) {
	g.p("func (s *%s) appendTo(b []byte, version int16, flex bool) ([]byte, error) {", st.name)
	g.p("var err error")
	g.p("_ = err")
	for _, f := range st.fields {
		if f.tag >= 0 {
			continue
		}
		c := f.versions.cond(valid)
		if c == "true" {
			g.writeField(f, valid, "s."+f.goName(), false)
			continue
		}
		g.p("if %s {", c)
		g.writeField(f, valid, "s."+f.goName(), false)
		if !f.ignorable {
			g.p("} else if !(%s) {", g.isDefaultExpr(f, "s."+f.goName()))
			g.p(`return b, &EncodeError{Struct: %q, Field: %q, Version: version, Reason: "field is not in this version and is not ignorable"}`, st.name, f.name)
		}
		g.p("}")
	}
	if flexible {
		g.p("if flex {")
		g.p("n := len(s.UnknownTags)")
		var tagged []*field
		for _, f := range st.fields {
			if f.tag >= 0 {
				tagged = append(tagged, f)
			}
		}
		for _, f := range tagged {
			g.p("has%d := !(%s) || s.presentTags&(1<<%d) != 0", f.tag, g.isDefaultExpr(f, "s."+f.goName()), f.tag)
			g.p("if has%d { n++ }", f.tag)
		}
		g.p("b = appendUvarint(b, uint32(n))")
		g.p("u := 0")
		for _, f := range tagged {
			g.p("if has%d {", f.tag)
			g.p("for ; u < len(s.UnknownTags) && s.UnknownTags[u].Tag < %d; u++ {", f.tag)
			g.p("b = appendRawTag(b, s.UnknownTags[u])")
			g.p("}")
			g.p("b = appendUvarint(b, %d)", f.tag)
			g.p("mark := len(b)")
			g.p("b = append(b, 0)")
			g.writeField(f, valid, "s."+f.goName(), true)
			g.p("b = patchSize(b, mark)")
			g.p("}")
		}
		g.p("for ; u < len(s.UnknownTags); u++ {")
		g.p("b = appendRawTag(b, s.UnknownTags[u])")
		g.p("}")
		g.p("}")
	}
	g.p("return b, nil")
	g.p("}")
	g.p("")
}

// genJSON writes the JSON writer (kafka-dump-log's field names and omissions).
func (g *gen) genJSON(st *structDef, valid vrange) {
	g.p("func (s *%s) writeJSON(w *jsonWriter, version int16) {", st.name)
	g.p("w.openObject()")
	for _, f := range st.fields {
		c := f.versions.cond(valid)
		open := false
		if c != "true" {
			g.p("if %s {", c)
			open = true
		}
		if f.tag >= 0 {
			g.p("if !(%s) {", g.isDefaultExpr(f, "s."+f.goName()))
		}
		g.p("w.key(%q)", f.jsonName())
		g.jsonField(f, "s."+f.goName())
		if f.tag >= 0 {
			g.p("}")
		}
		if open {
			g.p("}")
		}
	}
	g.p("w.closeObject()")
	g.p("}")
	g.p("")
}

func fieldNote(f *field) string {
	var notes []string
	if !f.nullable.none {
		notes = append(notes, "nullable")
	}
	if f.tag >= 0 {
		notes = append(notes, fmt.Sprintf("tag %d", f.tag))
	}
	if f.def != "" {
		notes = append(notes, "default "+f.def)
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, ", ")
}

func rangeText(r vrange) string {
	switch {
	case r.none:
		return "none"
	case r.hi == maxVersion:
		return fmt.Sprintf("%d+", r.lo)
	case r.lo == r.hi:
		return fmt.Sprintf("%d", r.lo)
	}
	return fmt.Sprintf("%d-%d", r.lo, r.hi)
}

func ownerName(s *schema, st *structDef) string {
	if m, ok := s.owner[st.name]; ok {
		return m.name
	}
	return "shared"
}

// readField emits code reading one field into dst. Tagged fields always use the flexible
// encoding.
func (g *gen) readField(f *field, valid vrange, dst string, tagged bool) {
	flex := "flex"
	if tagged {
		flex = "true"
	}
	nullable := g.nullableCond(f, valid)
	name := strconv.Quote(f.name)
	if f.isArray() {
		et := f.elem()
		minSize := elemMinSize(et)
		g.p("{")
		g.p("n, isNull := r.arrayLen(%s, %s, %d, %s)", flex, name, minSize, nullable)
		g.p("if isNull { %s = nil } else {", dst)
		g.p("a := reuse(%s, n)", dst)
		if et == "int32" {
			// arrayLen checked that n elements fit: one read for all of them.
			g.p("r.int32s(a)")
			g.p("%s = a", dst)
			g.p("}")
			g.p("}")
			return
		}
		g.p("for i := range a {")
		switch et {
		case "int8", "int16", "int32", "int64", "uint16", "uuid":
			g.p("a[i] = r.%s(%s)", readerFn(et), name)
		case "string":
			g.p("a[i] = r.str(%s, %s)", flex, name)
		case "bytes":
			g.p("a[i] = r.bytes(%s, %s)", flex, name)
		default:
			g.p("a[i].read(r, version, flex)")
		}
		g.p("}")
		g.p("%s = a", dst)
		g.p("}")
		g.p("}")
		return
	}
	switch f.typ {
	case "int8", "int16", "int32", "int64", "uint16", "uuid":
		g.p("%s = r.%s(%s)", dst, readerFn(f.typ), name)
	case "string":
		if nullable == "false" {
			g.p("%s = r.str(%s, %s)", dst, flex, name)
		} else if nullable == "true" {
			g.p("%s = r.nstrInto(%s, %s, %s)", dst, dst, flex, name)
		} else {
			g.p("if %s { %s = r.nstrInto(%s, %s, %s) } else { %s = r.strInto(%s, %s, %s) }", nullable, dst, dst, flex, name, dst, dst, flex, name)
		}
	case "bytes":
		if nullable == "false" {
			g.p("%s = r.bytes(%s, %s)", dst, flex, name)
		} else {
			g.p("%s = r.nbytes(%s, %s)", dst, flex, name)
		}
	default: // struct
		if nullable == "false" {
			g.p("%s.read(r, version, flex)", dst)
			return
		}
		marker := "r.structMarker(" + name + ")"
		if tagged {
			marker = "r.taggedStructMarker(" + name + ")"
		}
		g.p("if %s {", marker)
		g.p("v := %s", dst)
		g.p("if v == nil { v = new(%s) }", f.typ)
		g.p("v.read(r, version, flex)")
		g.p("%s = v", dst)
		if g.isNewDefault(f) {
			g.p("} else { if %s != nil { %s = %s }; %s = nil }", dst, spareOf(dst), dst, dst)
		} else {
			g.p("} else { %s = nil }", dst)
		}
	}
}

// isNewDefault reports whether f is a nullable struct whose default is a new (empty) struct,
// not null: the reader resets such a field in place, and keeps its memory in a spare field
// while the field is null.
func (g *gen) isNewDefault(f *field) bool {
	return !f.isArray() && strings.HasPrefix(g.defaultExpr(f), "new")
}

// defaultsToNew reports whether some field of type name is isNewDefault.
func (g *gen) defaultsToNew(name string) bool {
	for _, st := range g.s.structs {
		for _, f := range st.fields {
			if f.typ == name && g.isNewDefault(f) {
				return true
			}
		}
	}
	return false
}

// spareOf is the spare field of dst ("s.X" -> "s.spareX").
func spareOf(dst string) string {
	i := strings.LastIndex(dst, ".")
	return dst[:i+1] + "spare" + dst[i+1:]
}

// readDefault writes the reader's assignment of f's default to dst (a field absent from
// the version, or a tagged field before its tag is read). A value decoded into again keeps
// its memory: an empty array keeps its capacity, a default struct its pointer, so that
// DecodeInto into a reused value allocates nothing.
func (g *gen) readDefault(f *field, dst string) {
	def := g.defaultExpr(f)
	switch {
	case f.isArray() && def != "nil":
		g.p("if %s != nil { %s = %s[:0] } else { %s = %s }", dst, dst, dst, dst, def)
	case g.isNewDefault(f):
		sp := spareOf(dst)
		g.p("if %s == nil { %s, %s = %s, nil }", dst, dst, sp, sp)
		g.p("if %s != nil { %s.reset() } else { %s = %s }", dst, dst, dst, def)
	default:
		g.p("%s = %s", dst, def)
	}
}

func elemMinSize(t string) int {
	switch t {
	case "int8":
		return 1
	case "int16", "uint16":
		return 2
	case "int32":
		return 4
	case "int64":
		return 8
	case "uuid":
		return 16
	}
	return 1 // strings, bytes and structs take at least one byte each
}

func readerFn(t string) string {
	switch t {
	case "int8":
		return "int8"
	case "int16":
		return "int16"
	case "int32":
		return "int32"
	case "int64":
		return "int64"
	case "uint16":
		return "uint16"
	case "uuid":
		return "uuid"
	}
	panic(t)
}

func (g *gen) writeField(f *field, valid vrange, src string, tagged bool) {
	flex := "flex"
	if tagged {
		flex = "true"
	}
	nullable := g.nullableCond(f, valid)
	name := strconv.Quote(f.name)
	if f.isArray() {
		et := f.elem()
		if nullable != "false" {
			g.p("if %s == nil {", src)
			if nullable != "true" {
				g.p("if !(%s) { return b, &EncodeError{Field: %s, Version: version, Reason: \"null in a version where it is not nullable\"} }", nullable, name)
			}
			g.p("b = appendArrayLen(b, %s, -1)", flex)
			g.p("} else {")
		}
		g.p("b = appendArrayLen(b, %s, len(%s))", flex, src)
		g.p("for i := range %s {", src)
		switch et {
		case "int8", "int16", "int32", "int64", "uint16", "uuid":
			g.p("b = append%s(b, %s[i])", strings.ToUpper(et[:1])+et[1:], src)
		case "string":
			g.p("b = appendString(b, %s, %s[i])", flex, src)
		case "bytes":
			g.p("b = appendBytes(b, %s, %s[i])", flex, src)
		default:
			g.p("if b, err = %s[i].appendTo(b, version, flex); err != nil { return b, err }", src)
		}
		g.p("}")
		if nullable != "false" {
			g.p("}")
		}
		return
	}
	switch f.typ {
	case "int8", "int16", "int32", "int64", "uint16", "uuid":
		g.p("b = append%s(b, %s)", strings.ToUpper(f.typ[:1])+f.typ[1:], src)
	case "string":
		if nullable == "false" {
			g.p("b = appendString(b, %s, %s)", flex, src)
		} else {
			g.p("if %s == nil {", src)
			if nullable != "true" {
				g.p("if !(%s) { return b, &EncodeError{Field: %s, Version: version, Reason: \"null in a version where it is not nullable\"} }", nullable, name)
			}
			g.p("b = appendNullString(b, %s)", flex)
			g.p("} else { b = appendString(b, %s, *%s) }", flex, src)
		}
	case "bytes":
		if nullable == "false" {
			g.p("b = appendBytes(b, %s, %s)", flex, src)
		} else {
			g.p("if %s == nil { b = appendNullBytes(b, %s) } else { b = appendBytes(b, %s, %s) }", src, flex, flex, src)
		}
	default:
		if nullable == "false" {
			g.p("if b, err = %s.appendTo(b, version, flex); err != nil { return b, err }", src)
			return
		}
		if tagged {
			g.p("if %s == nil { b = appendUvarint(b, 0) } else {", src)
			g.p("b = appendUvarint(b, 1)")
		} else {
			g.p("if %s == nil { b = append(b, 0xff) } else {", src)
			g.p("b = append(b, 1)")
		}
		g.p("if b, err = %s.appendTo(b, version, flex); err != nil { return b, err }", src)
		g.p("}")
	}
}

func (g *gen) jsonField(f *field, src string) {
	if f.hook != "" {
		g.p("%s(w, %s)", f.hook, src)
		return
	}
	if f.isArray() {
		et := f.elem()
		if !f.nullable.none {
			g.p("if %s == nil {", src)
			g.p("w.null()")
			g.p("} else {")
		}
		g.p("w.openArray()")
		g.p("for i := range %s {", src)
		g.jsonScalar(et, src+"[i]", "&"+src+"[i]")
		g.p("}")
		g.p("w.closeArray()")
		if !f.nullable.none {
			g.p("}")
		}
		return
	}
	if !f.nullable.none && f.typ != "bytes" {
		g.p("if %s == nil { w.null() } else {", src)
		if f.typ == "string" {
			g.p("w.string(*%s)", src)
		} else {
			g.p("%s.writeJSON(w, version)", src)
		}
		g.p("}")
		return
	}
	if f.typ == "bytes" && !f.nullable.none {
		g.p("if %s == nil { w.null() } else { w.bytes(%s) }", src, src)
		return
	}
	g.jsonScalar(f.typ, src, "&"+src)
}

func (g *gen) jsonScalar(t, v, ptr string) {
	switch t {
	case "int8", "int16", "int32", "int64", "uint16":
		g.p("w.int(int64(%s))", v)
	case "uuid":
		g.p("w.uuid(%s)", v)
	case "string":
		g.p("w.string(%s)", v)
	case "bytes":
		g.p("w.bytes(%s)", v)
	default:
		g.p("(%s).writeJSON(w, version)", ptr)
	}
}

func (g *gen) genRegistry() {
	// Value constructors per layout.
	byID := map[int][]*message{}
	var ids []int
	for _, m := range g.s.messages {
		if m.kind != "value" {
			continue
		}
		if _, ok := byID[m.id]; !ok {
			ids = append(ids, m.id)
		}
		byID[m.id] = append(byID[m.id], m)
	}
	for _, ctor := range []struct{ name, doc, expr string }{
		{"newValue", "// newValue returns an empty value of record type t in layout l (for decoding into), or nil\n// when the layout has no such type.", "&%s{}"},
		{"NewValue", "// NewValue returns a value of record type t in layout l with every field at its default and\n// the newest version of its schema, ready to be filled and encoded, or nil when the layout has\n// no such type.", "New%s()"},
	} {
		g.p("%s", ctor.doc)
		g.p("func %s(t RecordType, l Layout) Value {", ctor.name)
		g.p("switch t {")
		for _, id := range ids {
			g.p("case %d:", id)
			var def *message
			for _, m := range byID[id] {
				if m.layout == "" {
					def = m
					continue
				}
				g.p("if l == %s { return "+ctor.expr+" }", layoutConst(m.layout), m.name)
			}
			if def != nil {
				g.p("return "+ctor.expr, def.name)
			} else {
				g.p("return nil")
			}
		}
		g.p("}")
		g.p("return nil")
		g.p("}")
		g.p("")
	}
	for _, m := range g.s.messages {
		if m.kind == "value" {
			g.p("// RecordType returns %d.", m.id)
			g.p("func (s *%s) RecordType() RecordType { return %d }", m.name, m.id)
			g.p("// Layout returns the layout this value's schema belongs to.")
			g.p("func (s *%s) Layout() Layout { return %s }", m.name, layoutConst(m.layout))
		}
		g.p("// ValueVersion returns the version the value is encoded at.")
		g.p("func (s *%s) ValueVersion() int16 { return s.Version }", m.name)
		g.p("func (s *%s) versionRange() (lo, hi int16) { return %d, %d }", m.name, m.valid.lo, m.valid.hi)
		flexLo := -1
		if !m.flexible.none {
			flexLo = m.flexible.lo
		}
		if flexLo < 0 {
			g.p("func (s *%s) flexible(version int16) bool { return false }", m.name)
		} else {
			g.p("func (s *%s) flexible(version int16) bool { return version >= %d }", m.name, flexLo)
		}
		g.p("func (s *%s) decodeBody(r reader, version int16) reader { s.Version = version; s.read(&r, version, s.flexible(version)); return r }", m.name)
		g.p("func (s *%s) appendBody(b []byte) ([]byte, error) { return s.appendTo(b, s.Version, s.flexible(s.Version)) }", m.name)
		g.p("func (s *%s) writeJSONBody(w *jsonWriter) { s.writeJSON(w, s.Version) }", m.name)
		g.p("// New%s returns a %s at version %d with every field at its default.", m.name, m.name, m.valid.hi)
		g.p("func New%s() *%s { s := &%s{Version: %d}; s.setDefaults(); return s }", m.name, m.name, m.name, m.valid.hi)
		g.p("")
	}
}

// genRecordTypes writes recordcodec's record types: constants, names, key shapes and the
// layouts that decode each id. (Which Kafka release knows and replays each id is a replay rule:
// genGroupstate writes it for groupstate.KafkaVersion.)
func (g *gen) genRecordTypes() {
	g.p("// NumRecordTypes is the number of record type ids (0 to NumRecordTypes-1) in the schema.")
	g.p("const NumRecordTypes = %d", len(g.s.records))
	g.p("")
	g.p("// The record types of __consumer_offsets (Kafka's CoordinatorRecordType).")
	g.p("const (")
	for _, r := range g.s.records {
		g.p("%s RecordType = %d", r.name, r.id)
	}
	g.p(")")
	g.p("")
	g.p("var typeNames = [NumRecordTypes]string{")
	for _, r := range g.s.records {
		g.p("%q,", r.name)
	}
	g.p("}")
	g.p("")
	g.p("func shapeOf(t RecordType) keyShape {")
	g.p("switch t {")
	for _, shape := range []struct{ key, konst string }{{"offset", "shapeOffset"}, {"group", "shapeGroup"}, {"groupid", "shapeGroupID"}, {"member", "shapeMember"}, {"regex", "shapeRegex"}} {
		var ids []string
		for _, r := range g.s.records {
			if r.key == shape.key {
				ids = append(ids, strconv.Itoa(r.id))
			}
		}
		if len(ids) > 0 {
			g.p("case %s: return %s", strings.Join(ids, ", "), shape.konst)
		}
	}
	g.p("}")
	g.p("return shapeUnknown")
	g.p("}")
	g.p("")
	// An id decodes in a layout with a value schema of its own for it, or, failing that, in
	// every layout when it has a default-layout schema.
	layouts := map[int]map[string]bool{}
	for _, m := range g.s.messages {
		if m.kind == "value" {
			if layouts[m.id] == nil {
				layouts[m.id] = map[string]bool{}
			}
			layouts[m.id][m.layout] = true
		}
	}
	g.p("// knownIn reports whether type t has a schema in layout l.")
	g.p("func knownIn(t RecordType, l Layout) bool {")
	g.p("switch t {")
	for _, r := range g.s.records {
		ls := layouts[r.id]
		if ls == nil {
			log.Fatalf("schema.txt: record %d %s has no value schema", r.id, r.name)
		}
		if ls[""] {
			continue
		}
		var conds []string
		for _, l := range []string{"40", "39", "streams-preview"} {
			if ls[l] {
				conds = append(conds, "l == "+layoutConst(l))
			}
		}
		g.p("case %d: return %s", r.id, strings.Join(conds, " || "))
	}
	g.p("}")
	g.p("return t >= 0 && t < NumRecordTypes")
	g.p("}")
	g.p("")
	g.p("")
}

// casesByCond writes a switch over the ids in v whose cases group the ids by the condition
// on minor that range gives them, and ends the function (returning false for other ids).
func (g *gen) casesByCond(v string, rangeOf func(*recordType) vrange) {
	var conds []string
	ids := map[string][]string{}
	for _, r := range g.s.records {
		c := minorCond(rangeOf(r))
		if _, ok := ids[c]; !ok {
			conds = append(conds, c)
		}
		ids[c] = append(ids[c], strconv.Itoa(r.id))
	}
	g.p("switch %s {", v)
	for _, c := range conds {
		g.p("case %s: return %s", strings.Join(ids[c], ", "), c)
	}
	g.p("}")
	g.p("return false")
}

// minorCond is the Go condition "minor is in r" (minor is never negative).
func minorCond(r vrange) string {
	switch {
	case r.none:
		return "false"
	case r.lo == 0 && r.hi == maxVersion:
		return "true"
	case r.hi == maxVersion:
		return fmt.Sprintf("minor >= %d", r.lo)
	case r.lo == r.hi:
		return fmt.Sprintf("minor == %d", r.lo)
	}
	return fmt.Sprintf("minor >= %d && minor <= %d", r.lo, r.hi)
}

// genGroupstate writes groupstate's record-type ids and Kafka-version rules: groupstate may
// not import recordcodec, so it gets its own generated copy of what it needs.
func (g *gen) genGroupstate() {
	g.p("// Code generated by recordcodec/internal/gen from recordcodec/internal/gen/schema.txt; DO NOT EDIT.")
	g.p("")
	g.p("package groupstate")
	g.p("")
	g.p("// Record type ids, for errors and version rules (recordcodec's RecordType values).")
	g.p("const (")
	for _, r := range g.s.records {
		g.p("recordType%s int16 = %d", r.name, r.id)
	}
	g.p(")")
	g.p("")
	g.p("// KnowsRecordType reports whether the serde of this Kafka version knows the record type:")
	g.p("// its loader skips (and counts) the ids it does not know.")
	g.p("func (v KafkaVersion) KnowsRecordType(id int16) bool {")
	g.p("minor := v.minor()")
	g.casesByCond("id", func(r *recordType) vrange { return r.kafka })
	g.p("}")
	g.p("")
	g.p("// ReplaysRecordType reports whether GroupCoordinatorShard.replay of this version dispatches")
	g.p("// the record type. A type it does not replay is either unknown to the version's serde (the")
	g.p("// loader skips it with a warning) or known but without a case in the replay switch (id 15")
	g.p("// on 4.0: Kafka throws IllegalStateException; see ReplayShareGroupStatePartitionMetadata).")
	g.p("func (v KafkaVersion) ReplaysRecordType(id int16) bool {")
	g.p("minor := v.minor()")
	g.casesByCond("id", func(r *recordType) vrange { return r.replay })
	g.p("}")
	g.p("")
	// The group type of a record follows from its name: GroupMetadata is the classic group's,
	// ConsumerGroup*, ShareGroup* and StreamsGroup* those of the modern types.
	g.p("// RecordGroupType is the type of group whose records id's are, \"\" for offset commits and")
	g.p("// unknown ids. A value of a group's own type never changes the group's type (one of another")
	g.p("// type may replace a simple classic group).")
	g.p("func RecordGroupType(id int16) GroupType {")
	g.p("switch id {")
	byType := map[string][]string{}
	var types []string
	for _, r := range g.s.records {
		var t string
		switch {
		case r.name == "GroupMetadata":
			t = "GroupTypeClassic"
		case strings.HasPrefix(r.name, "ConsumerGroup"):
			t = "GroupTypeConsumer"
		case strings.HasPrefix(r.name, "ShareGroup"):
			t = "GroupTypeShare"
		case strings.HasPrefix(r.name, "StreamsGroup"):
			t = "GroupTypeStreams"
		default:
			continue
		}
		if byType[t] == nil {
			types = append(types, t)
		}
		byType[t] = append(byType[t], strconv.Itoa(r.id))
	}
	for _, t := range types {
		g.p("case %s:", strings.Join(byType[t], ", "))
		g.p("return %s", t)
	}
	g.p("}")
	g.p("return \"\"")
	g.p("}")
}

func layoutConst(l string) string {
	switch l {
	case "":
		return "LayoutCurrent"
	case "40":
		return "Layout40"
	case "39":
		return "Layout39"
	case "streams-preview":
		return "LayoutStreamsPreview"
	}
	log.Fatalf("unknown layout %q", l)
	return ""
}

func main() {
	in := flag.String("in", "internal/gen/schema.txt", "schema table")
	out := flag.String("out", "zz_generated.go", "recordcodec's output file")
	gsOut := flag.String("groupstate", "../groupstate/zz_recordtypes.go", "groupstate's output file")
	valuesOut := flag.String("values", "../groupstate/zz_values.go", "groupstate's mutator inputs")
	dispatchOut := flag.String("dispatch", "../replay/zz_dispatch.go", "replay's record-to-mutator switch")
	fastOut := flag.String("fast", "zz_fastpath.go", "recordcodec's fast decoders")
	flag.Parse()
	s := parse(*in)
	g := &gen{s: s}
	g.run()
	write(*out, g.buf.Bytes())
	g = &gen{s: s}
	g.genGroupstate()
	write(*gsOut, g.buf.Bytes())
	m := newModel(s)
	g = &gen{s: s}
	g.genValues(m)
	write(*valuesOut, g.buf.Bytes())
	g = &gen{s: s}
	g.genDispatch(m)
	write(*dispatchOut, g.buf.Bytes())
	g = &gen{s: s}
	g.genFast()
	write(*fastOut, g.buf.Bytes())
}

// write formats src and writes it to path (or the unformatted source to path.broken when it
// does not parse).
func write(path string, src []byte) {
	formatted, err := format.Source(src)
	if err != nil {
		os.WriteFile(path+".broken", src, 0o644)
		log.Fatalf("generated code does not parse (see %s.broken): %v", path, err)
	}
	if err := os.WriteFile(path, formatted, 0o644); err != nil {
		log.Fatal(err)
	}
}
