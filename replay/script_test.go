package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

var rewriteScripts = flag.Bool("rewrite", false, "rewrite the expected output of testdata/scripts")

// Replay scripts (testdata/scripts/*.txt) feed records to an engine and show the state.
//
//	kafka-version 4.3            replay rules (default 4.4); resets the engine
//	batch [pid=N]                a data batch (pid: a transactional batch of producer N);
//	  TYPE KEY VALUE             its records, indented: the record type id, the key as JSON,
//	                             the value as JSON (fields as kafka-dump-log names them, any case;
//	                             omitted fields take their schema defaults) or null for a tombstone;
//	                             "v3 {...}" gives a value version (default: the newest)
//	commit pid=N | abort pid=N   a transaction marker of producer N
//	state [group]                prints the state (one group, or all, with offsets and pending
//	                             transactions) followed by the expected output between ---- lines
//
// Every batch prints "ok" or the error it stopped at (the engine runs in strict mode and is
// rebuilt after an error, so a script continues from the state before the failed batch).
// Run `go test ./replay -run Scripts -rewrite` to regenerate the expected outputs, and review
// the diff.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/scripts/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/scripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

type scriptRun struct {
	t       *testing.T
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
func (s *scriptRun) apply(b *eventlog.Batch) string {
	s.next = b.NextOffset()
	if err := s.engine.Apply(b); err != nil {
		s.engine = New(0, Options{Version: s.version})
		for _, prev := range s.batches {
			if err := s.engine.Apply(prev); err != nil {
				s.t.Fatalf("replaying earlier batches again: %v", err)
			}
		}
		return "error: " + err.Error()
	}
	s.batches = append(s.batches, b)
	return "ok"
}

func runScript(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out bytes.Buffer // the rewritten script
	run := &scriptRun{t: t}
	run.reset(groupstate.DefaultKafkaVersion)
	var pending *eventlog.Batch
	var pendingOut []string
	flush := func() {
		if pending == nil {
			return
		}
		res := run.apply(pending)
		for _, l := range pendingOut {
			out.WriteString(l + "\n")
		}
		out.WriteString("=> " + res + "\n")
		pending, pendingOut = nil, nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(line, "  ") && pending != nil {
			pending.Records = append(pending.Records, parseRecord(t, path, i+1, trimmed, run.next+int64(len(pending.Records))))
			pending.LastOffset = pending.BaseOffset + int64(len(pending.Records)) - 1
			pending.NumRecords = int32(len(pending.Records))
			pendingOut = append(pendingOut, line)
			continue
		}
		flush()
		if strings.HasPrefix(trimmed, "=> ") {
			continue // an old result line: regenerated
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			out.WriteString(line + "\n")
			continue
		}
		words := strings.Fields(trimmed)
		switch words[0] {
		case "kafka-version":
			v, err := groupstate.ParseKafkaVersion(words[1])
			if err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			run.reset(v)
			out.WriteString(line + "\n")
		case "batch":
			pending = &eventlog.Batch{BaseOffset: run.next, Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
			if len(words) > 1 {
				pending.ProducerID = pidArg(t, path, i+1, words[1])
				pending.ProducerEpoch = 0
				pending.Attributes |= eventlog.AttrTransactional
			}
			pendingOut = append(pendingOut, line)
		case "commit", "abort":
			pid := pidArg(t, path, i+1, words[1])
			typ := int16(recordcodec.ControlAbort)
			if words[0] == "commit" {
				typ = int16(recordcodec.ControlCommit)
			}
			key := recordcodec.ControlKey{Type: recordcodec.ControlType(typ)}.AppendTo(nil)
			val := recordcodec.EndTxnMarker{}.AppendTo(nil)
			b := &eventlog.Batch{BaseOffset: run.next, LastOffset: run.next, Magic: 2, ProducerID: pid, ProducerEpoch: 0, BaseSequence: -1,
				Attributes: eventlog.AttrTransactional | eventlog.AttrControl, NumRecords: 1,
				Records: []eventlog.Record{{Offset: run.next, Key: key, Value: val}}}
			out.WriteString(line + "\n=> " + run.apply(b) + "\n")
		case "state":
			got := renderState(run.engine.State(), strings.Join(words[1:], " "))
			out.WriteString(line + "\n----\n" + got + "----\n")
			// Skip the expected block in the file.
			j := i + 1
			if j < len(lines) && lines[j] == "----" {
				j++
				var want strings.Builder
				for j < len(lines) && lines[j] != "----" {
					want.WriteString(lines[j] + "\n")
					j++
				}
				if !*rewriteScripts && want.String() != got {
					t.Errorf("%s:%d: state differs\n--- want\n%s--- got\n%s", path, i+1, want.String(), got)
				}
				i = j
			} else if !*rewriteScripts {
				t.Errorf("%s:%d: state has no expected block; run with -rewrite", path, i+1)
			}
		default:
			t.Fatalf("%s:%d: unknown directive %q", path, i+1, words[0])
		}
	}
	flush()
	got := strings.TrimRight(out.String(), "\n") + "\n"
	if *rewriteScripts {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := strings.TrimRight(string(data), "\n") + "\n"; got != want {
		t.Errorf("%s: batch results differ from the script (run with -rewrite and review the diff):\n%s", path, lineDiff(want, got))
	}
}

func pidArg(t *testing.T, path string, line int, w string) int64 {
	v, ok := strings.CutPrefix(w, "pid=")
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil {
		t.Fatalf("%s:%d: want pid=N, got %q", path, line, w)
	}
	return n
}

// parseRecord reads "TYPE KEYJSON [vN] VALUEJSON|null" into a Kafka record.
func parseRecord(t *testing.T, path string, line int, s string, offset int64) eventlog.Record {
	fail := func(format string, args ...any) {
		t.Fatalf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
	}
	typStr, rest, _ := strings.Cut(s, " ")
	typ, err := strconv.Atoi(typStr)
	if err != nil {
		fail("record type %q: %v", typStr, err)
	}
	dec := json.NewDecoder(strings.NewReader(rest))
	var keyFields map[string]any
	if err := dec.Decode(&keyFields); err != nil {
		fail("key: %v", err)
	}
	k := recordcodec.Key{Type: recordcodec.RecordType(typ)}
	for name, v := range keyFields {
		switch strings.ToLower(name) {
		case "group", "groupid":
			k.Group = v.(string)
		case "topic":
			k.Topic = v.(string)
		case "partition":
			k.Partition = int32(v.(float64))
		case "memberid":
			k.Member = v.(string)
		case "regularexpression":
			k.Regex = v.(string)
		default:
			fail("unknown key field %q", name)
		}
	}
	rest = strings.TrimSpace(rest[dec.InputOffset():])
	var version *int16
	if v, r, ok := strings.Cut(rest, " "); ok && strings.HasPrefix(v, "v") {
		n, err := strconv.Atoi(v[1:])
		if err != nil {
			fail("version %q", v)
		}
		vv := int16(n)
		version, rest = &vv, r
	}
	keyBytes, err := k.AppendTo(nil)
	if err != nil {
		fail("key: %v", err)
	}
	rec := eventlog.Record{Offset: offset, Key: keyBytes}
	if rest == "null" {
		return rec
	}
	v := newScriptValue(k.Type)
	if v == nil {
		fail("no value type for record type %d", typ)
	}
	dj := json.NewDecoder(strings.NewReader(rest))
	dj.DisallowUnknownFields()
	if err := dj.Decode(v); err != nil {
		fail("value of type %d: %v", typ, err)
	}
	if version != nil {
		setVersion(v, *version)
	}
	rec.Value, err = recordcodec.EncodeValue(v)
	if err != nil {
		fail("encode value: %v", err)
	}
	return rec
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

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	sc := bufio.NewWriter(&b)
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(sc, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
		}
	}
	sc.Flush()
	return b.String()
}
