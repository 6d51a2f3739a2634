package replay

import (
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
// github.com/cockroachdb/datadriven: records go into an engine, and state directives show the
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
//	state [GROUP]                   prints the whole view of a group (with its committed offsets),
//	                                or of the state (groups, offsets, pending transactions, share
//	                                state metadata), as indented JSON
//
// batch, commit and abort print "ok" or the error the batch stopped at (the engine runs in
// strict mode and is rebuilt after an error, so a script continues from the state before the
// failed batch).
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

	default:
		td.Fatalf(t, "unknown directive %q", td.Cmd)
		return ""
	}
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
