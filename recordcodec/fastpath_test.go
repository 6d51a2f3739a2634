package recordcodec

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type typedValue struct {
	typ   RecordType
	value []byte
}

// streamsTaskValues are the values of records 21 and 22 among the vectors and the real
// Kafka 4.4 recording of streams groups (fixtures/real/streams, uncompressed), as Kafka
// writes them.
func streamsTaskValues(t testing.TB) []typedValue {
	t.Helper()
	var out []typedValue
	add := func(key, value []byte) {
		if len(key) >= 2 && key[0] == 0 && (key[1] == 21 || key[1] == 22) && value != nil {
			out = append(out, typedValue{RecordType(key[1]), value})
		}
	}
	for _, v := range loadVectors(t) {
		add(v.key, v.value)
	}
	files, _ := filepath.Glob("../fixtures/real/streams/__consumer_offsets-*/*.log")
	for _, f := range files {
		walkSegment(t, f, func(rr rawRecord) {
			if !rr.control {
				add(rr.key, rr.value)
			}
		})
	}
	return out
}

// unusualStreamsTaskValues are values of records 21 and 22 that Kafka does not usually write:
// null lists, absent, null and empty epochs, unknown tagged fields, more than 126 tasks, a
// subtopology id longer than 126 bytes.
func unusualStreamsTaskValues(t testing.TB) []typedValue {
	t.Helper()
	many := make([]int32, 200)
	for i := range many {
		many[i] = int32(i)
	}
	long := strings.Repeat("s", 130)
	cur := func(f func(v *StreamsGroupCurrentMemberAssignmentValue)) typedValue {
		v := NewStreamsGroupCurrentMemberAssignmentValue()
		v.MemberEpoch, v.PreviousMemberEpoch, v.State = 7, 6, 1
		v.ActiveTasks = []TaskIdsWithEpochs{{SubtopologyId: "0", Partitions: []int32{1, 2}, AssignmentEpochs: []int32{7, 7}}}
		f(v)
		b, err := AppendValue(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		return typedValue{StreamsGroupCurrentMemberAssignment, b}
	}
	tgt := func(f func(v *StreamsGroupTargetAssignmentMemberValue)) typedValue {
		v := NewStreamsGroupTargetAssignmentMemberValue()
		v.ActiveTasks = []TaskIds{{SubtopologyId: "0", Partitions: []int32{1, 2}}}
		f(v)
		b, err := AppendValue(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		return typedValue{StreamsGroupTargetAssignmentMember, b}
	}
	unknown := []RawTag{{Tag: 5, Data: []byte{1, 2, 3}}}
	// A null list (count byte 0), which neither record allows: the general reader fails.
	nullList := func(v typedValue, at int) typedValue {
		b := append([]byte(nil), v.value...)
		b[at] = 0
		return typedValue{v.typ, b}
	}
	return []typedValue{
		nullList(cur(func(v *StreamsGroupCurrentMemberAssignmentValue) {}), 11),
		nullList(tgt(func(v *StreamsGroupTargetAssignmentMemberValue) {}), 2),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) {}),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) { v.ActiveTasks[0].AssignmentEpochs = nil }),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) { v.ActiveTasks[0].AssignmentEpochs = []int32{} }),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) { v.ActiveTasks[0].presentTags = 1 }),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) { v.ActiveTasks[0].UnknownTags = unknown }),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) { v.UnknownTags = unknown }),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) { v.ActiveTasks[0].Partitions = many }),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) { v.ActiveTasks[0].AssignmentEpochs = many }),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) {
			v.StandbyTasks = []TaskIdsWithEpochs{{SubtopologyId: long}}
		}),
		cur(func(v *StreamsGroupCurrentMemberAssignmentValue) { v.ActiveTasks = nil }),
		tgt(func(v *StreamsGroupTargetAssignmentMemberValue) {}),
		tgt(func(v *StreamsGroupTargetAssignmentMemberValue) { v.ActiveTasks[0].UnknownTags = unknown }),
		tgt(func(v *StreamsGroupTargetAssignmentMemberValue) { v.UnknownTags = unknown }),
		tgt(func(v *StreamsGroupTargetAssignmentMemberValue) {
			v.StandbyTasks = []TaskIds{{SubtopologyId: "1", Partitions: many}}
		}),
		tgt(func(v *StreamsGroupTargetAssignmentMemberValue) { v.WarmupTasks = []TaskIds{{SubtopologyId: long}} }),
		tgt(func(v *StreamsGroupTargetAssignmentMemberValue) { v.ActiveTasks = nil }),
	}
}

// fastDecode decodes b into v through the fast path alone, reporting whether it took b.
func fastDecode(v Value, b []byte) bool {
	switch v := v.(type) {
	case *StreamsGroupTargetAssignmentMemberValue:
		return v.decodeFast(b)
	case *StreamsGroupCurrentMemberAssignmentValue:
		return v.decodeFast(b)
	}
	return false
}

// agree fails unless the fast path's decode of b equals the general reader's (every field,
// unexported ones included; the same bytes back), both decoding into a value that held prev
// first (nil: a fresh value). It reports whether the fast path took b.
func agree(t *testing.T, name string, typ RecordType, prev, b []byte) bool {
	t.Helper()
	d := Decoder{NoCopy: true}
	fast, general := NewValue(typ, LayoutCurrent), NewValue(typ, LayoutCurrent)
	if prev != nil {
		_ = d.decodeGeneral(fast, prev)
		_ = d.decodeGeneral(general, prev)
	}
	if !fastDecode(fast, b) {
		var sp TaskListSpans
		if scan(&sp, typ, b) {
			t.Fatalf("%s: the task list scan takes %x, which the fast decoder declines", name, b)
		}
		return false
	}
	spansAgree(t, name, typ, b, fast)
	if err := d.decodeGeneral(general, b); err != nil {
		t.Fatalf("%s: the fast path took %x, the general reader says %v", name, b, err)
	}
	if !reflect.DeepEqual(fast, general) {
		t.Fatalf("%s: %x decodes to\n%#v\nfast, and to\n%#v\nin the general reader", name, b, fast, general)
	}
	if enc, _ := AppendValue(nil, fast); !bytes.Equal(enc, b) {
		t.Fatalf("%s: the fast path's value re-encodes to %x, want %x", name, enc, b)
	}
	return true
}

func scan(sp *TaskListSpans, typ RecordType, b []byte) bool {
	if typ == StreamsGroupTargetAssignmentMember {
		return sp.ScanTargetAssignmentMember(b)
	}
	return sp.ScanCurrentMemberAssignment(b)
}

// spansAgree fails unless the task list scan of b (which the fast decoder decoded into v)
// takes it, and finds each list where it is: every span decodes on its own (nothing left
// over) to the list v holds, the spans lie in b in field order, and WithEpochs says what v's
// lists say.
func spansAgree(t *testing.T, name string, typ RecordType, b []byte, v Value) {
	t.Helper()
	var sp TaskListSpans
	if !scan(&sp, typ, b) {
		t.Fatalf("%s: the task list scan declines %x, which the fast decoder takes", name, b)
	}
	var got, want [6]any
	var withEpochs [6]bool
	end := 0
	for i, span := range sp.Lists {
		if span == nil {
			continue
		}
		at := cap(b) - cap(span) // where span starts, if it is b's
		if len(span) == 0 || at < end || at+len(span) > len(b) || &b[at] != &span[0] {
			t.Fatalf("%s: list %d's span %x does not lie after the previous one in %x", name, i, span, b)
		}
		end = at + len(span)
		f := fastReader{b: span, ok: true}
		if typ == StreamsGroupTargetAssignmentMember {
			got[i] = f.taskIdsArray(nil)
		} else {
			got[i] = f.taskIdsWithEpochsArray(nil)
		}
		if !f.ok || f.p != len(span) {
			t.Fatalf("%s: list %d's span %x does not decode on its own", name, i, span)
		}
	}
	switch v := v.(type) {
	case *StreamsGroupTargetAssignmentMemberValue:
		want = [6]any{v.ActiveTasks, v.StandbyTasks, v.WarmupTasks}
		if sp.MemberEpoch != 0 || sp.PreviousMemberEpoch != 0 || sp.State != 0 || sp.Lists[3] != nil {
			t.Fatalf("%s: record 21's scan %+v has more than three lists", name, sp)
		}
	case *StreamsGroupCurrentMemberAssignmentValue:
		want = [6]any{v.ActiveTasks, v.StandbyTasks, v.WarmupTasks, v.ActiveTasksPendingRevocation,
			v.StandbyTasksPendingRevocation, v.WarmupTasksPendingRevocation}
		for i, l := range want {
			withEpochs[i] = true
			for _, x := range l.([]TaskIdsWithEpochs) {
				if len(x.Partitions) > 0 && (x.AssignmentEpochs == nil || len(x.AssignmentEpochs) != len(x.Partitions)) {
					withEpochs[i] = false
				}
			}
		}
		if sp.MemberEpoch != v.MemberEpoch || sp.PreviousMemberEpoch != v.PreviousMemberEpoch || sp.State != v.State {
			t.Fatalf("%s: scanned epochs and state %d %d %d, decoded %d %d %d", name, sp.MemberEpoch, sp.PreviousMemberEpoch,
				sp.State, v.MemberEpoch, v.PreviousMemberEpoch, v.State)
		}
		if sp.WithEpochs != withEpochs {
			t.Fatalf("%s: WithEpochs %v, the decoded lists say %v", name, sp.WithEpochs, withEpochs)
		}
	}
	for i := range got {
		if want[i] == nil {
			continue
		}
		// Compare as the decoder leaves them (reuse makes empty lists non-nil).
		if fmt.Sprintf("%+v", got[i]) != fmt.Sprintf("%+v", want[i]) {
			t.Fatalf("%s: list %d's span decodes to %+v, the value holds %+v", name, i, got[i], want[i])
		}
	}
}

// TestStreamsTasksFastPath: the fast decoders of records 21 and 22 (the replay hot path of
// streams groups) take every value Kafka wrote (vectors and real recordings) and decode it
// exactly as the general reader does, into a fresh value and into one that held each other
// value of the type; unusual values (unknown tags, long lists, ...), truncated values and
// values with a trailing byte are declined or decoded the same. The task list scans
// (TaskListSpans) take exactly what the fast decoders take, and find each list (spansAgree).
func TestStreamsTasksFastPath(t *testing.T) {
	values := streamsTaskValues(t)
	if len(values) < 12 {
		t.Fatalf("only %d values of records 21 and 22 (2 vectors and 13 recorded ones expected)", len(values))
	}
	for i, v := range values {
		name := fmt.Sprintf("value %d (record %d)", i, v.typ)
		if !agree(t, name, v.typ, nil, v.value) {
			t.Fatalf("%s: the fast path declines %x, which Kafka wrote", name, v.value)
		}
		for _, prev := range values {
			if prev.typ == v.typ {
				agree(t, name+" after another", v.typ, prev.value, v.value)
			}
		}
	}
	for i, v := range append(unusualStreamsTaskValues(t), values...) {
		name := fmt.Sprintf("shape %d (record %d)", i, v.typ)
		agree(t, name, v.typ, nil, v.value)
		for n := range len(v.value) {
			agree(t, fmt.Sprintf("%s cut to %d bytes", name, n), v.typ, nil, v.value[:n])
		}
		agree(t, name+" with a trailing byte", v.typ, nil, append(v.value[:len(v.value):len(v.value)], 0))
	}
}

// FuzzStreamsTasksFastPath: the fast decoders of records 21 and 22 agree with the general
// reader on every input they take, and the task list scans with the fast decoders.
func FuzzStreamsTasksFastPath(f *testing.F) {
	for _, v := range streamsTaskValues(f) {
		f.Add(byte(v.typ), v.value)
	}
	f.Fuzz(func(t *testing.T, typ byte, b []byte) {
		rt := StreamsGroupTargetAssignmentMember
		if typ%2 == 0 {
			rt = StreamsGroupCurrentMemberAssignment
		}
		agree(t, "fuzz", rt, nil, b)
	})
}
