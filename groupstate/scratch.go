package groupstate

import (
	"cmp"
	"slices"
	"strings"
)

// Mutators get their inputs from a replay engine that decodes every record into reused memory
// whose strings alias the batch being read (package replay). So a mutator copies whatever it
// keeps, and keeps nothing of a record that changes nothing: it first builds the canonical form
// of its input (the sorted sets and lists the state stores) in the State's scratch memory,
// compares it with what the state holds, and copies it into memory of its own only where it
// differs. A record that repeats what the state holds allocates nothing.
//
// What the state stores this way is immutable once stored: lists and their elements, strings,
// and the pointees of string pointers are never written again, so that an unchanged part is
// kept (and may be shared, as a member's current standby tasks with its target's, or as equal
// task lists of different members and groups: tasklists.go) when its neighbours change. Members, their metadata holders and their task holders are updated in
// place instead of being copied per record; each is referenced from one place only.

// scratch is a State's reused memory for the canonical forms of one mutator's inputs; they are
// valid until the next mutator starts.
type scratch struct {
	ints     []int32     // the partitions and epochs of every canonical list
	pairs    []partEpoch // partition-epoch pairing
	kvs      []KeyValue
	strs     []string
	subs     []Subtopology
	tasks    [2]StreamsTasks // record 22: the assigned and the pending-revocation tasks
	taskBufs [2]tasksScratch // and the lists they are built in
	task3    [3][]TaskIDs    // record 21: the target's active, standby and warm-up tasks
	tpes     [2][]TopicPartitionsWithEpochs
	tps      []TopicPartitions
	infos    [2][]TopicPartitionsInfo
	uuids    []Uuid
	// record 2
	classic   []ClassicMember
	named     []NamedTopicPartitions
	decoded   ClassicMember
	memberIdx map[string]int
	statics   map[string]bool
	names     map[string]string // interned names (intern)
	// The subtopology ids taskName interned last, the state's own copies: the few ids of the
	// groups being replayed, found without hashing.
	taskNames [4]string
	nextName  int
	// shared holds task lists stored before, for later equal lists to share (tasklists.go).
	shared *sharedTasks
}

// tasksScratch is the memory of one canonical StreamsTasks.
type tasksScratch struct {
	active          []TaskIDsWithEpochs
	standby, warmup []TaskIDs
}

// scr returns the state's scratch memory, emptied for a new mutator.
func (s *State) scr() *scratch {
	if s.sc == nil {
		s.sc = &scratch{names: map[string]string{}, shared: newSharedTasks()}
	}
	sc := s.sc
	sc.ints, sc.pairs = sc.ints[:0], sc.pairs[:0]
	return sc
}

// Interned names: at most internMax names of at most internLen bytes, then plain copies.
const (
	internMax = 1 << 14
	internLen = 64
)

// intern returns the state's own copy of a name that many records repeat (subtopology ids,
// topic names, config keys): one copy serves them all. It never returns a string that
// aliases x's memory.
func (s *State) intern(x string) string {
	if x == "" {
		return ""
	}
	if s.sc == nil {
		s.scr()
	}
	if v, ok := s.sc.names[x]; ok {
		return v
	}
	c := strings.Clone(x)
	if len(c) <= internLen && len(s.sc.names) < internMax {
		s.sc.names[c] = c
	}
	return c
}

// keepStr returns old when it equals x (nothing to copy), else a copy of x.
func keepStr(old, x string) string {
	if old == x {
		return old
	}
	return strings.Clone(x)
}

// keepStrPtr returns old when it points to the same string as x (or both are nil), else a
// new pointer to a copy of *x.
func keepStrPtr(old, x *string) *string {
	switch {
	case x == nil:
		return nil
	case old != nil && *old == *x:
		return old
	}
	c := strings.Clone(*x)
	return &c
}

func sameStrPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// sameInts compares two partition or epoch lists. Canonical and stored lists are nil when
// empty (the copies make them so), so that comparing by length is exact.
func sameInts(a, b []int32) bool { return slices.Equal(a, b) }

// isSet reports whether p is already a sorted set (strictly increasing).
func isSet(p []int32) bool {
	for i := 1; i < len(p); i++ {
		if p[i-1] >= p[i] {
			return false
		}
	}
	return true
}

// setInt32 stores v in *p, allocating the pointee only the first time: a member's epoch
// pointers are its own (see the invariants above).
func setInt32(p **int32, v int32) {
	if *p == nil {
		*p = new(int32)
	}
	**p = v
}

func setInt8(p **int8, v int8) {
	if *p == nil {
		*p = new(int8)
	}
	**p = v
}

// ---------------------------------------------------------------------------------------
// Canonical forms, built in scratch memory.

// appendSet appends the sorted set of p to *ints and returns it, nil when p is empty (Java:
// new HashSet<>(list), then sorted).
func appendSet(ints *[]int32, p []int32) []int32 {
	if len(p) == 0 {
		return nil
	}
	start := len(*ints)
	*ints = append(*ints, p...)
	seg := (*ints)[start:]
	slices.Sort(seg)
	seg = slices.Compact(seg)
	*ints = (*ints)[:start+len(seg)]
	return seg[:len(seg):len(seg)]
}

type partEpoch struct{ p, e int32 }

// appendPartitionEpochs pairs partitions with epochs as Kafka's HashMap<Integer, Integer>
// puts do (a repeated partition keeps its last epoch) and returns both sorted by partition,
// nil when parts is empty. Partition i gets eps[i], or def when eps is absent or of another
// length.
func (sc *scratch) appendPartitionEpochs(parts, eps []int32, def int32) (ps, es []int32) {
	if len(parts) == 0 {
		return nil, nil
	}
	useList := eps != nil && len(eps) == len(parts)
	pr := sc.pairs[:0]
	for i, p := range parts {
		e := def
		if useList {
			e = eps[i]
		}
		pr = append(pr, partEpoch{p, e})
	}
	slices.SortStableFunc(pr, func(a, b partEpoch) int { return cmp.Compare(a.p, b.p) })
	pr = keepLastOf(pr, func(a, b partEpoch) bool { return a.p == b.p })
	sc.pairs = pr
	start := len(sc.ints)
	for _, x := range pr {
		sc.ints = append(sc.ints, x.p)
	}
	for _, x := range pr {
		sc.ints = append(sc.ints, x.e)
	}
	n := len(pr)
	return sc.ints[start : start+n : start+n], sc.ints[start+n : start+2*n : start+2*n]
}

// keepLastOf removes from a sorted s every element that is followed by one with the same key:
// of equal keys the last one in (stable-sorted) input order stays.
func keepLastOf[E any](s []E, same func(a, b E) bool) []E {
	w := 0
	for i := range s {
		if i+1 < len(s) && same(s[i], s[i+1]) {
			continue
		}
		s[w] = s[i]
		w++
	}
	return s[:w]
}

// canonKeyed sorts a list collected into a map (HashMap.put: the last entry of a key wins;
// Collectors.toMap: a repeated key fails) by key and keeps the last entry of each key;
// repeated reports that some key came twice. s is scratch memory, reordered in place.
func canonKeyed[E any](s []E, cmpKey func(a, b E) int) (out []E, repeated bool) {
	slices.SortStableFunc(s, cmpKey)
	out = keepLastOf(s, func(a, b E) bool { return cmpKey(a, b) == 0 })
	return out, len(out) != len(s)
}

// firstRepeated returns the first key of in, in input order, that an earlier element had:
// the key Collectors.toMap reports. It is for error messages only.
func firstRepeated[E any, K comparable](in []E, key func(E) K) K {
	seen := map[K]bool{}
	for _, e := range in {
		if k := key(e); seen[k] {
			return k
		} else {
			seen[k] = true
		}
	}
	var zero K
	return zero
}

// canonStrings is stringSet in scratch memory.
func (sc *scratch) canonStrings(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	sc.strs = append(sc.strs[:0], in...)
	slices.Sort(sc.strs)
	return slices.Compact(sc.strs)
}

// canonKVs is keyValueMap(in, true) in scratch memory; repeated reports a repeated key.
func (sc *scratch) canonKVs(in []KeyValue) (out []KeyValue, repeated bool) {
	if len(in) == 0 {
		return nil, false
	}
	sc.kvs = append(sc.kvs[:0], in...)
	return canonKeyed(sc.kvs, func(a, b KeyValue) int { return strings.Compare(a.Key, b.Key) })
}

// canonTaskIDs is taskSets in scratch memory (dst's): partition sets, sorted by subtopology,
// the last entry of a subtopology kept; repeated reports a repeated subtopology id.
func (sc *scratch) canonTaskIDs(dst *[]TaskIDs, in []TaskIDs) (out []TaskIDs, repeated bool) {
	if len(in) == 0 {
		return nil, false
	}
	if canonicalTasks(in) {
		return in, false // the common case: written sorted, as coordinators write them
	}
	s := (*dst)[:0]
	for _, t := range in {
		s = append(s, TaskIDs{SubtopologyID: t.SubtopologyID, Partitions: appendSet(&sc.ints, t.Partitions)})
	}
	*dst = s
	return canonKeyed(s, byTaskID)
}

// canonicalTasks reports whether in is its own canonical form (up to empty partition lists,
// which compare equal to nil): subtopologies strictly increasing, each with a partition set.
func canonicalTasks(in []TaskIDs) bool {
	for i := range in {
		if i > 0 && in[i-1].SubtopologyID >= in[i].SubtopologyID || !isSet(in[i].Partitions) {
			return false
		}
	}
	return true
}

func byTaskID(a, b TaskIDs) int { return strings.Compare(a.SubtopologyID, b.SubtopologyID) }

func byTaskIDWithEpochs(a, b TaskIDsWithEpochs) int {
	return strings.Compare(a.SubtopologyID, b.SubtopologyID)
}

func byTopicID(a, b TopicPartitions) int { return a.TopicID.Compare(b.TopicID) }

func byTopicIDWithEpochs(a, b TopicPartitionsWithEpochs) int { return a.TopicID.Compare(b.TopicID) }

// canonTopicPartitions is topicPartitionSets in scratch memory; repeated reports a repeated
// topic id.
func (sc *scratch) canonTopicPartitions(in []TopicPartitions) (out []TopicPartitions, repeated bool) {
	if len(in) == 0 {
		return nil, false
	}
	canonical := true
	for i := range in {
		if i > 0 && in[i-1].TopicID.Compare(in[i].TopicID) >= 0 || !isSet(in[i].Partitions) {
			canonical = false
			break
		}
	}
	if canonical {
		return in, false
	}
	s := sc.tps[:0]
	for _, t := range in {
		s = append(s, TopicPartitions{TopicID: t.TopicID, Partitions: appendSet(&sc.ints, t.Partitions)})
	}
	sc.tps = s
	return canonKeyed(s, byTopicID)
}

// ---------------------------------------------------------------------------------------
// Comparisons of canonical forms with stored ones, and copies into the state's memory.

func sameTaskIDs(a, b []TaskIDs) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].SubtopologyID != b[i].SubtopologyID || !slices.Equal(a[i].Partitions, b[i].Partitions) {
			return false
		}
	}
	return true
}

func sameTaskIDsWithEpochs(a, b []TaskIDsWithEpochs) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].SubtopologyID != b[i].SubtopologyID || !slices.Equal(a[i].Partitions, b[i].Partitions) || !slices.Equal(a[i].AssignmentEpochs, b[i].AssignmentEpochs) {
			return false
		}
	}
	return true
}

func sameTopicPartitions(a, b []TopicPartitions) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].TopicID != b[i].TopicID || !slices.Equal(a[i].Partitions, b[i].Partitions) {
			return false
		}
	}
	return true
}

func sameTopicPartitionsWithEpochs(a, b []TopicPartitionsWithEpochs) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].TopicID != b[i].TopicID || !slices.Equal(a[i].Partitions, b[i].Partitions) || !slices.Equal(a[i].AssignmentEpochs, b[i].AssignmentEpochs) {
			return false
		}
	}
	return true
}

func sameKVs(a, b []KeyValue) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }

func sameStrings(a, b []string) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }

// intSlab hands out sub-slices of one allocation, for the lists of one stored value.
type intSlab []int32

func newIntSlab(n int) intSlab { return make(intSlab, 0, n) }

// take copies p into the slab; an empty p becomes nil, as canonical lists have it.
func (s *intSlab) take(p []int32) []int32 {
	if len(p) == 0 {
		return nil
	}
	start := len(*s)
	*s = append(*s, p...)
	return (*s)[start:len(*s):len(*s)]
}

// taskCopy copies the changed task lists of one record into the state's memory with one
// allocation for all their plain entries, one for the entries with epochs and one for all
// their numbers. Plan every list first (plan, planE), then alloc, then copy (plain, withEpochs)
// in any order.
type taskCopy struct {
	n, nE, nInts int
	entries      []TaskIDs
	entriesE     []TaskIDsWithEpochs
	ints         intSlab
}

func (tc *taskCopy) plan(c []TaskIDs) {
	tc.n += len(c)
	for _, t := range c {
		tc.nInts += len(t.Partitions)
	}
}

// planE plans a list with epochs whose partitions may be shared with like (the same
// subtopology with the same partitions in like: a member's target).
func (tc *taskCopy) planE(c []TaskIDsWithEpochs, like []TaskIDs) {
	tc.nE += len(c)
	for _, t := range c {
		tc.nInts += len(t.AssignmentEpochs)
		if findTasks(like, t.SubtopologyID, t.Partitions) == nil {
			tc.nInts += len(t.Partitions)
		}
	}
}

func (tc *taskCopy) alloc() {
	if tc.n > 0 {
		tc.entries = make([]TaskIDs, tc.n)
	}
	if tc.nE > 0 {
		tc.entriesE = make([]TaskIDsWithEpochs, tc.nE)
	}
	if tc.nInts > 0 {
		tc.ints = newIntSlab(tc.nInts)
	}
}

// findTasks returns the partitions of subtopology id in the sorted list l when they equal p.
func findTasks(l []TaskIDs, id string, p []int32) []int32 {
	for _, t := range l {
		if t.SubtopologyID == id {
			if len(p) > 0 && slices.Equal(t.Partitions, p) {
				return t.Partitions
			}
			return nil
		}
	}
	return nil
}

// taskName is the state's copy of a subtopology id: old's entry at i when it has that id
// (the usual case: the same subtopologies as before), else one of the ids interned last, else
// the interned one.
func (s *State) taskName(id string, old []TaskIDs, i int) string {
	if i < len(old) && old[i].SubtopologyID == id {
		return old[i].SubtopologyID
	}
	sc := s.sc
	for _, n := range sc.taskNames {
		if n == id && n != "" {
			return n
		}
	}
	n := s.intern(id)
	sc.taskNames[sc.nextName] = n
	sc.nextName = (sc.nextName + 1) % len(sc.taskNames)
	return n
}

// plain copies the canonical list c (old is the list it replaces, for the names).
func (s *State) copyTasks(tc *taskCopy, c, old []TaskIDs) []TaskIDs {
	if c == nil {
		return nil
	}
	out := tc.entries[:len(c):len(c)]
	tc.entries = tc.entries[len(c):]
	for i, t := range c {
		out[i] = TaskIDs{SubtopologyID: s.taskName(t.SubtopologyID, old, i), Partitions: tc.ints.take(t.Partitions)}
	}
	return out
}

// copyTasksE copies the canonical list with epochs c, sharing partitions with like.
func (s *State) copyTasksE(tc *taskCopy, c []TaskIDsWithEpochs, like []TaskIDs) []TaskIDsWithEpochs {
	if c == nil {
		return nil
	}
	out := tc.entriesE[:len(c):len(c)]
	tc.entriesE = tc.entriesE[len(c):]
	for i, t := range c {
		e := TaskIDsWithEpochs{SubtopologyID: s.taskName(t.SubtopologyID, like, i), AssignmentEpochs: tc.ints.take(t.AssignmentEpochs)}
		if e.Partitions = findTasks(like, t.SubtopologyID, t.Partitions); e.Partitions == nil {
			e.Partitions = tc.ints.take(t.Partitions)
		}
		out[i] = e
	}
	return out
}

func ownTopicPartitions(c []TopicPartitions) []TopicPartitions {
	if c == nil {
		return nil
	}
	n := 0
	for _, t := range c {
		n += len(t.Partitions)
	}
	slab := newIntSlab(n)
	out := make([]TopicPartitions, len(c))
	for i, t := range c {
		out[i] = TopicPartitions{TopicID: t.TopicID, Partitions: slab.take(t.Partitions)}
	}
	return out
}

func ownTopicPartitionsWithEpochs(c []TopicPartitionsWithEpochs) []TopicPartitionsWithEpochs {
	if c == nil {
		return nil
	}
	n := 0
	for _, t := range c {
		n += len(t.Partitions) + len(t.AssignmentEpochs)
	}
	slab := newIntSlab(n)
	out := make([]TopicPartitionsWithEpochs, len(c))
	for i, t := range c {
		out[i] = TopicPartitionsWithEpochs{TopicID: t.TopicID, Partitions: slab.take(t.Partitions), AssignmentEpochs: slab.take(t.AssignmentEpochs)}
	}
	return out
}

// keepKVs returns old when it equals the canonical c, else a copy of c in the state's memory.
func (s *State) keepKVs(old, c []KeyValue) []KeyValue {
	if sameKVs(old, c) {
		return old
	}
	if c == nil {
		return nil
	}
	out := make([]KeyValue, len(c))
	for i, kv := range c {
		out[i] = KeyValue{Key: s.intern(kv.Key), Value: s.intern(kv.Value)}
	}
	return out
}

// keepStrings returns old when it equals the canonical c, else a copy of c with interned
// strings (topic names).
func (s *State) keepStrings(old, c []string) []string {
	if sameStrings(old, c) {
		return old
	}
	if c == nil {
		return nil
	}
	out := make([]string, len(c))
	for i, x := range c {
		out[i] = s.intern(x)
	}
	return out
}
