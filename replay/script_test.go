package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// TestScripts runs the replay scripts, testdata/scripts/*.txt, with
// github.com/cockroachdb/datadriven: records go into an engine, and directives show parts of the
// state. Each file starts with a fresh engine on the newest Kafka version.
//
//	kafka-version 4.3               replay rules (default 4.4); resets the engine; prints nothing
//	batch [pid=N]                   a data batch (pid: a transactional batch of producer N), its
//	TYPE KEY VALUE                  records as input, one a line: the record type id, the key as
//	...                             JSON, the value as JSON (fields as kafka-dump-log names them,
//	                                any case; omitted fields take their schema defaults) or null
//	                                for a tombstone; "v3 {...}" gives a value version (default:
//	                                the newest)
//	commit pid=N | abort pid=N      a transaction marker of producer N
//	get GROUP PATH...               prints the fields PATH of the group's view, one a line
//	get-state PATH...               the same over the whole state
//	state [GROUP]                   prints the whole view of a group (with its committed offsets),
//	                                or of the state (groups, offsets, pending transactions, share
//	                                state metadata), as indented JSON
//
// batch, commit and abort print "ok" or the error the batch stopped at (the engine runs in
// strict mode and is rebuilt after an error, so a script continues from the state before the
// failed batch).
//
// A PATH is resolved against the JSON that state prints: for get, the group object (groupId,
// type, state, and classic, consumer, share or streams) with the group's committed offsets
// added as "offsets"; for get-state, the whole state. Names are separated by dots and a
// [SEL] picks an array element: the element whose id is SEL, else the element at index SEL. An
// element's id is its memberId, producerId, topicId, subtopologyId, regex, key or groupId (the
// first of these it has), or for an offset "topic/partition" or "group/topic/partition". For
// example:
//
//	get cg state consumer.groupEpoch consumer.members[m1].memberEpoch offsets[orders/0]
//	----
//	state: "Reconciling"
//	consumer.groupEpoch: 2
//	consumer.members[m1].memberEpoch: 1
//	offsets[orders/0]: {"groupId":"cg","topic":"orders","partition":0,...}
//
// Each value prints as compact JSON, "(absent)" when the field or element is not there (the view
// omits empty lists and unset optional fields). get on a group that does not exist first prints
// `no group "cg"`.
//
// Run `go test ./replay -run TestScripts -rewrite` to regenerate the outputs, and review the diff.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/scripts", func(t *testing.T, path string) {
		run := &scriptRun{}
		run.reset(groupstate.DefaultKafkaVersion)
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return run.directive(t, td)
		})
	})
}

type scriptRun struct {
	version groupstate.KafkaVersion
	engine  *Engine
	batches []*eventlog.Batch // applied so far: an engine rebuilt after an error replays them
	next    int64
}

func (s *scriptRun) reset(v groupstate.KafkaVersion) {
	s.version, s.batches, s.next = v, nil, 0
	s.engine = New(0, Options{Version: v})
}

// apply runs one batch; on error the engine is rebuilt from the batches before it.
func (s *scriptRun) apply(t *testing.T, b *eventlog.Batch) string {
	s.next = b.NextOffset()
	if err := s.engine.Apply(b); err != nil {
		s.engine = New(0, Options{Version: s.version})
		for _, prev := range s.batches {
			if err := s.engine.Apply(prev); err != nil {
				t.Fatalf("replaying earlier batches again: %v", err)
			}
		}
		return "error: " + err.Error()
	}
	s.batches = append(s.batches, b)
	return "ok"
}

func (s *scriptRun) directive(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "kafka-version":
		if len(td.CmdArgs) != 1 {
			td.Fatalf(t, "usage: kafka-version VERSION")
		}
		v, err := groupstate.ParseKafkaVersion(td.CmdArgs[0].Key)
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		s.reset(v)
		return ""

	case "batch":
		b := &eventlog.Batch{BaseOffset: s.next, Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		if td.HasArg("pid") {
			td.ScanArgs(t, "pid", &b.ProducerID)
			b.ProducerEpoch = 0
			b.Attributes |= eventlog.AttrTransactional
		}
		for i, line := range strings.Split(td.Input, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			rec, err := parseRecord(line, b.BaseOffset+int64(len(b.Records)))
			if err != nil {
				td.Fatalf(t, "input line %d: %v", i+1, err)
			}
			b.Records = append(b.Records, rec)
		}
		if len(b.Records) == 0 {
			td.Fatalf(t, "batch: no records")
		}
		b.LastOffset = b.BaseOffset + int64(len(b.Records)) - 1
		b.NumRecords = int32(len(b.Records))
		return s.apply(t, b)

	case "commit", "abort":
		var pid int64
		td.ScanArgs(t, "pid", &pid)
		typ := recordcodec.ControlAbort
		if td.Cmd == "commit" {
			typ = recordcodec.ControlCommit
		}
		key := recordcodec.ControlKey{Type: typ}.AppendTo(nil)
		val := recordcodec.EndTxnMarker{}.AppendTo(nil)
		b := &eventlog.Batch{BaseOffset: s.next, LastOffset: s.next, Magic: 2, ProducerID: pid, ProducerEpoch: 0, BaseSequence: -1,
			Attributes: eventlog.AttrTransactional | eventlog.AttrControl, NumRecords: 1,
			Records: []eventlog.Record{{Offset: s.next, Key: key, Value: val}}}
		return s.apply(t, b)

	case "state":
		group := ""
		switch len(td.CmdArgs) {
		case 0:
		case 1:
			group = td.CmdArgs[0].Key
		default:
			td.Fatalf(t, "usage: state [GROUP]")
		}
		return renderState(s.engine.State(), group)

	case "get", "get-state":
		args := td.CmdArgs
		var out strings.Builder
		var root any = s.engine.State().Dump()
		if td.Cmd == "get" {
			if len(args) == 0 {
				td.Fatalf(t, "usage: get GROUP PATH...")
			}
			group := args[0].Key
			args = args[1:]
			st := s.engine.State()
			view := map[string]any{}
			if g, ok := st.Group(group); ok {
				view = jsonObject(t, g)
			} else {
				fmt.Fprintf(&out, "no group %q\n", group)
			}
			if offsets := st.Offsets(group); len(offsets) > 0 {
				view["offsets"] = offsets
			}
			root = view
		}
		if len(args) == 0 {
			td.Fatalf(t, "%s: no paths", td.Cmd)
		}
		raw, err := json.Marshal(root)
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		for _, a := range args {
			if len(a.Vals) != 0 {
				td.Fatalf(t, "%s: a path has no value: %s", td.Cmd, a)
			}
			v, ok, err := resolvePath(raw, a.Key)
			if err != nil {
				td.Fatalf(t, "%s: %v", a.Key, err)
			}
			if !ok {
				fmt.Fprintf(&out, "%s: (absent)\n", a.Key)
				continue
			}
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				td.Fatalf(t, "%s: %v", a.Key, err)
			}
			fmt.Fprintf(&out, "%s: %s\n", a.Key, c.Bytes())
		}
		return out.String()

	default:
		td.Fatalf(t, "unknown directive %q", td.Cmd)
		return ""
	}
}

// jsonObject returns v's JSON object as a map of raw values (kept in their order when
// marshalled again, since each value is a json.RawMessage).
func jsonObject(t *testing.T, v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// resolvePath walks path (see TestScripts) over the JSON document doc. It returns the raw JSON
// of the value, or ok false when a field or element is not there.
func resolvePath(doc json.RawMessage, path string) (v json.RawMessage, ok bool, err error) {
	v = doc
	rest := path
	for first := true; rest != ""; first = false {
		if !first {
			if rest[0] != '.' {
				return nil, false, fmt.Errorf("want '.' or '[' at %q", rest)
			}
			rest = rest[1:]
		}
		end := strings.IndexAny(rest, ".[")
		if end < 0 {
			end = len(rest)
		}
		name := rest[:end]
		rest = rest[end:]
		if name == "" {
			return nil, false, fmt.Errorf("empty field name before %q", rest)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(v, &obj); err != nil || obj == nil {
			return nil, false, fmt.Errorf("%s: not an object", name)
		}
		if v, ok = obj[name]; !ok {
			return nil, false, nil
		}
		for strings.HasPrefix(rest, "[") {
			close := strings.IndexByte(rest, ']')
			if close < 0 {
				return nil, false, fmt.Errorf("unclosed '[' in %q", rest)
			}
			sel := rest[1:close]
			rest = rest[close+1:]
			if v, ok, err = selectElement(v, sel); err != nil || !ok {
				return nil, ok, err
			}
		}
	}
	return v, true, nil
}

// selectElement picks the element of the JSON array arr whose id is sel, else the element at
// index sel.
func selectElement(arr json.RawMessage, sel string) (json.RawMessage, bool, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(arr, &elems); err != nil {
		return nil, false, fmt.Errorf("[%s]: not an array", sel)
	}
	var found json.RawMessage
	for _, e := range elems {
		var obj map[string]json.RawMessage
		if json.Unmarshal(e, &obj) != nil || obj == nil {
			continue
		}
		for _, id := range elementIDs(obj) {
			if id == sel {
				if found != nil {
					return nil, false, fmt.Errorf("[%s]: more than one element has that id", sel)
				}
				found = e
			}
		}
	}
	if found != nil {
		return found, true, nil
	}
	if i, err := strconv.Atoi(sel); err == nil {
		if i >= 0 && i < len(elems) {
			return elems[i], true, nil
		}
	}
	return nil, false, nil
}

// elementIDs returns the ids an array element answers to.
func elementIDs(obj map[string]json.RawMessage) []string {
	text := func(k string) (string, bool) {
		raw, ok := obj[k]
		if !ok {
			return "", false
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		return string(raw), true // a number
	}
	if topic, ok := text("topic"); ok {
		if p, ok := text("partition"); ok {
			ids := []string{topic + "/" + p}
			if g, ok := text("groupId"); ok {
				ids = append(ids, g+"/"+topic+"/"+p)
			}
			return ids
		}
		return []string{topic}
	}
	for _, k := range []string{"memberId", "producerId", "topicId", "subtopologyId", "regex", "key", "groupId"} {
		if id, ok := text(k); ok {
			return []string{id}
		}
	}
	return nil
}

// parseRecord reads "TYPE KEYJSON [vN] VALUEJSON|null" into a Kafka record.
func parseRecord(s string, offset int64) (eventlog.Record, error) {
	fail := func(format string, args ...any) (eventlog.Record, error) {
		return eventlog.Record{}, fmt.Errorf(format, args...)
	}
	typStr, rest, _ := strings.Cut(s, " ")
	typ, err := strconv.Atoi(typStr)
	if err != nil {
		return fail("record type %q: %v", typStr, err)
	}
	dec := json.NewDecoder(strings.NewReader(rest))
	var keyFields map[string]any
	if err := dec.Decode(&keyFields); err != nil {
		return fail("key: %v", err)
	}
	k := recordcodec.Key{Type: recordcodec.RecordType(typ)}
	for name, v := range keyFields {
		var ok bool
		switch strings.ToLower(name) {
		case "group", "groupid":
			k.Group, ok = v.(string)
		case "topic":
			k.Topic, ok = v.(string)
		case "partition":
			var f float64
			f, ok = v.(float64)
			k.Partition = int32(f)
		case "memberid":
			k.Member, ok = v.(string)
		case "regularexpression":
			k.Regex, ok = v.(string)
		default:
			return fail("unknown key field %q", name)
		}
		if !ok {
			return fail("key field %q: wrong type %T", name, v)
		}
	}
	rest = strings.TrimSpace(rest[dec.InputOffset():])
	var version *int16
	if v, r, ok := strings.Cut(rest, " "); ok && strings.HasPrefix(v, "v") {
		n, err := strconv.Atoi(v[1:])
		if err != nil {
			return fail("version %q", v)
		}
		vv := int16(n)
		version, rest = &vv, r
	}
	keyBytes, err := k.AppendTo(nil)
	if err != nil {
		return fail("key: %v", err)
	}
	rec := eventlog.Record{Offset: offset, Key: keyBytes}
	if rest == "null" {
		return rec, nil
	}
	v := newScriptValue(k.Type)
	if v == nil {
		return fail("no value type for record type %d", typ)
	}
	dj := json.NewDecoder(strings.NewReader(rest))
	dj.DisallowUnknownFields()
	if err := dj.Decode(v); err != nil {
		return fail("value of type %d: %v", typ, err)
	}
	if version != nil {
		setVersion(v, *version)
	}
	rec.Value, err = recordcodec.EncodeValue(v)
	if err != nil {
		return fail("encode value: %v", err)
	}
	return rec, nil
}

// newScriptValue returns a value of the newest version with every field at its default.
func newScriptValue(t recordcodec.RecordType) recordcodec.Value {
	switch t {
	case 0:
		return recordcodec.NewLegacyOffsetCommitValue()
	case 1:
		return recordcodec.NewOffsetCommitValue()
	case 2:
		return recordcodec.NewGroupMetadataValue()
	case 3:
		return recordcodec.NewConsumerGroupMetadataValue()
	case 4:
		return recordcodec.NewConsumerGroupPartitionMetadataValue()
	case 5:
		return recordcodec.NewConsumerGroupMemberMetadataValue()
	case 6:
		return recordcodec.NewConsumerGroupTargetAssignmentMetadataValue()
	case 7:
		return recordcodec.NewConsumerGroupTargetAssignmentMemberValue()
	case 8:
		return recordcodec.NewConsumerGroupCurrentMemberAssignmentValue()
	case 10:
		return recordcodec.NewShareGroupMemberMetadataValue()
	case 11:
		return recordcodec.NewShareGroupMetadataValue()
	case 12:
		return recordcodec.NewShareGroupTargetAssignmentMetadataValue()
	case 13:
		return recordcodec.NewShareGroupTargetAssignmentMemberValue()
	case 14:
		return recordcodec.NewShareGroupCurrentMemberAssignmentValue()
	case 15:
		return recordcodec.NewShareGroupStatePartitionMetadataValue()
	case 16:
		return recordcodec.NewConsumerGroupRegularExpressionValue()
	case 17:
		return recordcodec.NewStreamsGroupMetadataValue()
	case 19:
		return recordcodec.NewStreamsGroupMemberMetadataValue()
	case 20:
		return recordcodec.NewStreamsGroupTargetAssignmentMetadataValue()
	case 21:
		return recordcodec.NewStreamsGroupTargetAssignmentMemberValue()
	case 22:
		return recordcodec.NewStreamsGroupCurrentMemberAssignmentValue()
	case 23:
		return recordcodec.NewStreamsGroupTopologyValue()
	}
	return nil
}

func setVersion(v recordcodec.Value, version int16) {
	switch x := v.(type) {
	case *recordcodec.OffsetCommitValue:
		x.Version = version
	case *recordcodec.GroupMetadataValue:
		x.Version = version
	}
}

// renderState prints the canonical dump (of one group when asked), indented JSON.
func renderState(st groupstate.View, group string) string {
	var v any = st.Dump()
	if group != "" {
		g, ok := st.Group(group)
		if !ok {
			return fmt.Sprintf("no group %q (offsets: %d)\n", group, len(st.Offsets(group)))
		}
		v = struct {
			Group   groupstate.Group             `json:"group"`
			Offsets []groupstate.CommittedOffset `json:"offsets,omitempty"`
		}{g, st.Offsets(group)}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return string(b) + "\n"
}

// TestResolvePath pins the path language of get and get-state.
func TestResolvePath(t *testing.T) {
	doc := json.RawMessage(`{"state":"Stable","consumer":{"members":[{"memberId":"m1","memberEpoch":3},{"memberId":"7","memberEpoch":4}],
		"partitions":[5,6]},"offsets":[{"groupId":"g","topic":"t.x","partition":0,"committedOffset":9},
		{"groupId":"h","topic":"t.x","partition":0,"committedOffset":8}],"empty":null}`)
	for _, c := range []struct{ path, want string }{
		{"state", `"Stable"`},
		{"consumer.members[m1].memberEpoch", `3`},
		{"consumer.members[7].memberEpoch", `4`}, // an id before an index
		{"consumer.members[0].memberEpoch", `3`},
		{"consumer.members[m9]", `(absent)`},
		{"consumer.members[2]", `(absent)`},
		{"consumer.partitions[1]", `6`},
		{"consumer.groupEpoch", `(absent)`},
		{"offsets[g/t.x/0].committedOffset", `9`},
		{"offsets[h/t.x/0]", `{"groupId":"h","topic":"t.x","partition":0,"committedOffset":8}`},
		{"offsets[t.x/0]", `error`}, // two groups have it
		{"empty", `null`},
		{"state.x", `error`},
		{"consumer.partitions[0].x", `error`},
		{"consumer..members", `error`},
		{"consumer.members[m1", `error`},
	} {
		v, ok, err := resolvePath(doc, c.path)
		got := "(absent)"
		switch {
		case err != nil:
			got = "error"
		case ok:
			var b bytes.Buffer
			if err := json.Compact(&b, v); err != nil {
				t.Fatal(err)
			}
			got = b.String()
		}
		if got != c.want {
			t.Errorf("%s = %s, want %s (%v)", c.path, got, c.want, err)
		}
	}
}
