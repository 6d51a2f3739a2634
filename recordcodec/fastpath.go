package recordcodec

import (
	"encoding/binary"
	"unsafe"
)

// OffsetCommitValue's fast decoder (decodeFast) is generated from the schema
// (zz_fastpath.go); the fast decoders of records 21 and 22 below read their task lists with
// fastReader.

// fastReader reads the usual shapes of flexible (compact) values straight from b for the
// replay hot path: every length and count in one varint byte, strings aliasing b, no tagged
// fields but the ones a caller handles. ok turns false at the first thing it does not handle
// (longer varints, nulls, unknown tags, a short input: every malformed input among them);
// the caller then leaves the value to the general reader, which decodes it again from the
// start and names the problem.
type fastReader struct {
	b  []byte
	p  int
	ok bool
}

// count reads a compact length or count of at most 126 that is not null.
func (f *fastReader) count() int {
	if f.p >= len(f.b) {
		f.ok = false
		return 0
	}
	c := int(f.b[f.p])
	if c == 0 || c >= 0x80 {
		f.ok = false
		return 0
	}
	f.p++
	return c - 1
}

// str reads a compact string that is not null, aliasing b (as the general reader's
// aliasing mode does).
func (f *fastReader) str() string {
	n := f.count()
	if !f.ok || len(f.b)-f.p < n {
		f.ok = false
		return ""
	}
	v := f.b[f.p : f.p+n]
	f.p += n
	return unsafe.String(unsafe.SliceData(v), n)
}

// int32s reads the n int32s of an array into dst reused as the general reader reuses it.
func (f *fastReader) int32s(dst []int32, n int) []int32 {
	if !f.ok || len(f.b)-f.p < 4*n {
		f.ok = false
		return dst
	}
	a := reuse(dst, n)
	b := f.b[f.p : f.p+4*n]
	for i := range a {
		if len(b) < 4 {
			break // cannot happen (the check above); lets the compiler drop the bounds checks
		}
		a[i] = int32(binary.BigEndian.Uint32(b))
		b = b[4:]
	}
	f.p += 4 * n
	return a
}

// noTags reads a tagged-field count of zero.
func (f *fastReader) noTags() {
	if f.p >= len(f.b) || f.b[f.p] != 0 {
		f.ok = false
		return
	}
	f.p++
}

func (s *TaskIds) readFast(f *fastReader) {
	s.SubtopologyId = f.str()
	s.Partitions = f.int32s(s.Partitions, f.count())
	s.UnknownTags, s.presentTags = nil, 0
	f.noTags()
}

func (s *TaskIdsWithEpochs) readFast(f *fastReader) {
	s.SubtopologyId = f.str()
	s.Partitions = f.int32s(s.Partitions, f.count())
	if s.AssignmentEpochs != nil {
		s.AssignmentEpochs = s.AssignmentEpochs[:0]
	} else {
		s.AssignmentEpochs = []int32{}
	}
	s.UnknownTags, s.presentTags = nil, 0
	present, n, end := f.epochsTag()
	if !f.ok || !present {
		return
	}
	if n < 0 {
		s.AssignmentEpochs = nil
	} else {
		s.AssignmentEpochs = f.int32s(s.AssignmentEpochs, n)
	}
	s.presentTags = 1 << 0
	f.tagEnd(end)
}

// epochsTag reads the tagged fields of a TaskIdsWithEpochs entry in the shapes the fast path
// takes: none (present false), or exactly tag 0, AssignmentEpochs, in a payload whose size
// fits one byte, holding null (n < 0) or the count n of the epochs that follow. The caller
// reads or skips those, then calls tagEnd(end).
func (f *fastReader) epochsTag() (present bool, n, end int) {
	if !f.ok || f.p >= len(f.b) {
		f.ok = false
		return false, 0, 0
	}
	switch f.b[f.p] {
	case 0:
		f.p++
		return false, 0, 0
	case 1:
		if len(f.b)-f.p < 4 || f.b[f.p+1] != 0 || f.b[f.p+2] >= 0x80 {
			f.ok = false
			return false, 0, 0
		}
		end = f.p + 3 + int(f.b[f.p+2])
		f.p += 3
		if f.b[f.p] == 0 { // null
			f.p++
			return true, -1, end
		}
		return true, f.count(), end
	}
	f.ok = false
	return false, 0, 0
}

// tagEnd checks that a tag's payload ended at end.
func (f *fastReader) tagEnd(end int) {
	if f.p != end {
		f.ok = false
	}
}

// taskIdsArray reads a compact array of task lists into dst, reused as the general reader
// reuses it. (Not generic over the element type: a generic one moves the reader to the heap.)
func (f *fastReader) taskIdsArray(dst []TaskIds) []TaskIds {
	n := f.count()
	if !f.ok {
		return dst
	}
	a := reuse(dst, n)
	for i := range a {
		if a[i].readFast(f); !f.ok {
			break
		}
	}
	return a
}

// taskIdsWithEpochsArray is taskIdsArray for lists with epochs.
func (f *fastReader) taskIdsWithEpochsArray(dst []TaskIdsWithEpochs) []TaskIdsWithEpochs {
	n := f.count()
	if !f.ok {
		return dst
	}
	a := reuse(dst, n)
	for i := range a {
		if a[i].readFast(f); !f.ok {
			break
		}
	}
	return a
}

// decodeFast decodes the usual shape of a StreamsGroupTargetAssignmentMemberValue (version
// 0, as every Kafka release writes it) for a decoder that aliases b; it reports false for
// anything else, which the general path then decodes from the start. s may have been
// partly overwritten then: the general path sets every field again.
func (s *StreamsGroupTargetAssignmentMemberValue) decodeFast(b []byte) bool {
	if len(b) < 2 || b[0] != 0 || b[1] != 0 {
		return false
	}
	f := fastReader{b: b, p: 2, ok: true}
	s.ActiveTasks = f.taskIdsArray(s.ActiveTasks)
	s.StandbyTasks = f.taskIdsArray(s.StandbyTasks)
	s.WarmupTasks = f.taskIdsArray(s.WarmupTasks)
	f.noTags()
	if !f.ok || f.p != len(b) {
		return false
	}
	s.Version, s.UnknownTags, s.presentTags = 0, nil, 0
	return true
}

// decodeFast decodes the usual shape of a StreamsGroupCurrentMemberAssignmentValue, as
// StreamsGroupTargetAssignmentMemberValue.decodeFast does.
func (s *StreamsGroupCurrentMemberAssignmentValue) decodeFast(b []byte) bool {
	var ok bool
	if s.MemberEpoch, s.PreviousMemberEpoch, s.State, ok = currentAssignmentHead(b); !ok {
		return false
	}
	f := fastReader{b: b, p: currentAssignmentHeadLen, ok: true}
	s.ActiveTasks = f.taskIdsWithEpochsArray(s.ActiveTasks)
	s.StandbyTasks = f.taskIdsWithEpochsArray(s.StandbyTasks)
	s.WarmupTasks = f.taskIdsWithEpochsArray(s.WarmupTasks)
	s.ActiveTasksPendingRevocation = f.taskIdsWithEpochsArray(s.ActiveTasksPendingRevocation)
	s.StandbyTasksPendingRevocation = f.taskIdsWithEpochsArray(s.StandbyTasksPendingRevocation)
	s.WarmupTasksPendingRevocation = f.taskIdsWithEpochsArray(s.WarmupTasksPendingRevocation)
	f.noTags()
	if !f.ok || f.p != len(b) {
		return false
	}
	s.Version, s.UnknownTags, s.presentTags = 0, nil, 0
	return true
}

// currentAssignmentHeadLen is the length of a record 22 value's version 0 and fixed fields.
const currentAssignmentHeadLen = 2 + 4 + 4 + 1

// currentAssignmentHead reads the version (0 only) and the fixed fields of a record 22 value.
func currentAssignmentHead(b []byte) (memberEpoch, previousMemberEpoch int32, state int8, ok bool) {
	if len(b) < currentAssignmentHeadLen || b[0] != 0 || b[1] != 0 {
		return 0, 0, 0, false
	}
	return int32(binary.BigEndian.Uint32(b[2:])), int32(binary.BigEndian.Uint32(b[6:])), int8(b[10]), true
}

// TaskListSpans is where the task lists of a streams assignment record (StreamsGroupTarget-
// AssignmentMember, record 21; StreamsGroupCurrentMemberAssignment, record 22) lie in its
// value's bytes: each list as encoded, its compact count and every entry, so that a caller can
// recognize a list it met before by its bytes without decoding it (replay's cache of decoded
// task lists). The scans accept exactly the values decodeFast decodes, and each span decodes
// to the list decodeFast would produce.
type TaskListSpans struct {
	// Record 22's member epochs and state (zero for record 21).
	MemberEpoch, PreviousMemberEpoch int32
	State                            int8
	// Lists in field order: record 21's active, standby and warm-up tasks (the rest nil);
	// record 22's active, standby, warm-up, then the same pending revocation.
	Lists [6][]byte
	// WithEpochs[i] reports that every task of record 22's list i came with its assignment
	// epoch: every entry has the AssignmentEpochs tag with as many epochs as partitions, or
	// no partitions. Only then does the list's meaning not depend on the member epoch.
	WithEpochs [6]bool
}

// ScanTargetAssignmentMember fills s from a record 21 value (version 0), reporting false
// where StreamsGroupTargetAssignmentMemberValue's fast decoder would.
func (s *TaskListSpans) ScanTargetAssignmentMember(b []byte) bool {
	if len(b) < 2 || b[0] != 0 || b[1] != 0 {
		return false
	}
	*s = TaskListSpans{}
	f := fastReader{b: b, p: 2, ok: true}
	for i := range 3 {
		s.Lists[i], _ = f.skipTaskIdsArray(false)
	}
	f.noTags()
	return f.ok && f.p == len(b)
}

// ScanCurrentMemberAssignment fills s from a record 22 value (version 0), reporting false
// where StreamsGroupCurrentMemberAssignmentValue's fast decoder would.
func (s *TaskListSpans) ScanCurrentMemberAssignment(b []byte) bool {
	var ok bool
	if s.MemberEpoch, s.PreviousMemberEpoch, s.State, ok = currentAssignmentHead(b); !ok {
		return false
	}
	f := fastReader{b: b, p: currentAssignmentHeadLen, ok: true}
	for i := range s.Lists {
		s.Lists[i], s.WithEpochs[i] = f.skipTaskIdsArray(true)
	}
	f.noTags()
	return f.ok && f.p == len(b)
}

// skipTaskIdsArray passes over a compact array of TaskIds (withEpochs false) or
// TaskIdsWithEpochs in the shapes their readFast reads, returning its bytes and, for lists
// with epochs, whether every entry has as many epochs as partitions (or no partitions).
func (f *fastReader) skipTaskIdsArray(withEpochs bool) (span []byte, complete bool) {
	start := f.p
	n := f.count()
	complete = true
	for range n {
		if !f.ok {
			break
		}
		f.skip(f.count()) // subtopology id
		parts := f.count()
		f.skip(4 * parts)
		if !withEpochs {
			f.noTags()
			continue
		}
		present, epochs, end := f.epochsTag()
		if present && epochs >= 0 {
			f.skip(4 * epochs)
			complete = complete && (parts == 0 || epochs == parts)
		} else {
			complete = complete && parts == 0 // absent or null: the tasks take the member epoch
		}
		if present {
			f.tagEnd(end)
		}
	}
	if !f.ok {
		return nil, false
	}
	return f.b[start:f.p], complete
}

// skip passes over n bytes.
func (f *fastReader) skip(n int) {
	if !f.ok || len(f.b)-f.p < n {
		f.ok = false
		return
	}
	f.p += n
}
