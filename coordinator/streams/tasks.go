package streams

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// TaskID is one task: a subtopology and a partition number.
type TaskID struct {
	Subtopology string
	Partition   int32
}

func compareTask(a, b TaskID) int {
	if c := cmp.Compare(a.Subtopology, b.Subtopology); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// taskMap is a set of tasks. For active tasks of a member's current assignment the value is
// the task's assignment epoch (Kafka 4.2+, used by offset-commit validation); elsewhere the
// value is unused and 0.
type taskMap map[TaskID]int32

func (m taskMap) has(t TaskID) bool { _, ok := m[t]; return ok }

func (m taskMap) clone() taskMap {
	if len(m) == 0 {
		return nil
	}
	c := make(taskMap, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// sameKeys compares the task sets, ignoring values.
func sameKeys(a, b taskMap) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// sameWithValues compares tasks and their values (assignment epochs).
func sameWithValues(a, b taskMap) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func (m taskMap) sorted() []TaskID {
	out := make([]TaskID, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, compareTask)
	return out
}

// tuple is Kafka's TasksTuple(WithEpochs): active, standby and warm-up tasks.
type tuple struct {
	active, standby, warmup taskMap
}

func (t tuple) empty() bool { return len(t.active) == 0 && len(t.standby) == 0 && len(t.warmup) == 0 }

func (t tuple) clone() tuple {
	return tuple{active: t.active.clone(), standby: t.standby.clone(), warmup: t.warmup.clone()}
}

// sameTasks compares the three sets without epochs (TasksTuple.equals on the target).
func (t tuple) sameTasks(o tuple) bool {
	return sameKeys(t.active, o.active) && sameKeys(t.standby, o.standby) && sameKeys(t.warmup, o.warmup)
}

// sameWithEpochs compares the sets and the active assignment epochs.
func (t tuple) sameWithEpochs(o tuple) bool {
	return sameWithValues(t.active, o.active) && sameKeys(t.standby, o.standby) && sameKeys(t.warmup, o.warmup)
}

// containsAny reports whether t holds any task of o in the same role (TasksTuple.containsAny).
func (t tuple) containsAny(o tuple) bool {
	for k := range o.active {
		if t.active.has(k) {
			return true
		}
	}
	for k := range o.standby {
		if t.standby.has(k) {
			return true
		}
	}
	for k := range o.warmup {
		if t.warmup.has(k) {
			return true
		}
	}
	return false
}

func (t tuple) size() int { return len(t.active) + len(t.standby) + len(t.warmup) }

// ---------------------------------------------------------------------------------------
// Conversions. Every list the coordinator writes or answers is sorted by subtopology id, with
// sorted partitions, as Kafka's record helpers and response builders do.

type subtopologyTasks struct {
	id         string
	partitions []int32
	epochs     []int32
}

func grouped(m taskMap) []subtopologyTasks {
	if len(m) == 0 {
		return nil
	}
	var out []subtopologyTasks
	for _, t := range m.sorted() {
		if n := len(out); n == 0 || out[n-1].id != t.Subtopology {
			out = append(out, subtopologyTasks{id: t.Subtopology})
		}
		last := &out[len(out)-1]
		last.partitions = append(last.partitions, t.Partition)
		last.epochs = append(last.epochs, m[t])
	}
	return out
}

func fromStateTasks(in []groupstate.TaskIDs) taskMap {
	if len(in) == 0 {
		return nil
	}
	m := taskMap{}
	for _, t := range in {
		for _, p := range t.Partitions {
			m[TaskID{t.SubtopologyID, p}] = 0
		}
	}
	return m
}

func fromStateTasksWithEpochs(in []groupstate.TaskIDsWithEpochs, memberEpoch int32) taskMap {
	if len(in) == 0 {
		return nil
	}
	m := taskMap{}
	for _, t := range in {
		for i, p := range t.Partitions {
			e := memberEpoch
			if len(t.AssignmentEpochs) == len(t.Partitions) {
				e = t.AssignmentEpochs[i]
			}
			m[TaskID{t.SubtopologyID, p}] = e
		}
	}
	return m
}

func fromStateTuple(in *groupstate.StreamsTasks, memberEpoch int32) tuple {
	if in == nil {
		return tuple{}
	}
	return tuple{
		active:  fromStateTasksWithEpochs(in.ActiveTasks, memberEpoch),
		standby: fromStateTasks(in.StandbyTasks),
		warmup:  fromStateTasks(in.WarmupTasks),
	}
}

// fromRequestTasks converts owned tasks of a heartbeat; nil stays nil ("not reported").
func fromRequestTasks(in []kmsg.TaskIDs) taskMap {
	m := taskMap{}
	for _, t := range in {
		for _, p := range t.Partitions {
			m[TaskID{t.SubtopologyID, p}] = 0
		}
	}
	return m
}

func toRecordTasks(m taskMap) []recordcodec.TaskIds {
	g := grouped(m)
	out := make([]recordcodec.TaskIds, len(g))
	for i, s := range g {
		out[i] = recordcodec.TaskIds{SubtopologyId: s.id, Partitions: s.partitions}
	}
	return out
}

func toRecordTasksWithEpochs(m taskMap, withEpochs bool) []recordcodec.TaskIdsWithEpochs {
	g := grouped(m)
	out := make([]recordcodec.TaskIdsWithEpochs, len(g))
	for i, s := range g {
		// AssignmentEpochs defaults to an empty list (Kafka's schema), which is what Kafka
		// leaves on standby and warm-up entries: not written.
		out[i] = recordcodec.TaskIdsWithEpochs{SubtopologyId: s.id, Partitions: s.partitions, AssignmentEpochs: []int32{}}
		if withEpochs {
			out[i].AssignmentEpochs = s.epochs
		}
	}
	return out
}

func toResponseTasks(m taskMap) []kmsg.TaskIDs {
	g := grouped(m)
	out := make([]kmsg.TaskIDs, len(g))
	for i, s := range g {
		out[i] = kmsg.TaskIDs{SubtopologyID: s.id, Partitions: s.partitions}
	}
	return out
}
