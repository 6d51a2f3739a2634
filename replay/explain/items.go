package explain

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/recordcodec"
)

// item is one unit of assignment: a partition of a topic (named, or known by id) or a task.
type item struct {
	space uint8  // spaceTopic, spaceTopicID, spaceTask
	role  uint8  // roleNone for partitions; roleActive, roleStandby, roleWarmup for tasks
	name  string // topic name, topic id (recordcodec.UUID's string) or subtopology id
	part  int32
}

const (
	spaceTopic uint8 = iota
	spaceTopicID
	spaceTask
)

const (
	roleNone uint8 = iota
	roleActive
	roleStandby
	roleWarmup
)

var roleNames = [...]string{roleNone: "", roleActive: "active", roleStandby: "standby", roleWarmup: "warm-up"}

func compareItems(a, b item) int {
	if c := cmp.Compare(a.space, b.space); c != 0 {
		return c
	}
	if c := cmp.Compare(a.role, b.role); c != 0 {
		return c
	}
	if c := cmp.Compare(a.name, b.name); c != 0 {
		return c
	}
	return cmp.Compare(a.part, b.part)
}

// items is a sorted set of items without repeats.
type items []item

func (s items) normalize() items {
	// Records list tasks and partitions sorted, and the items are built in role order: most
	// lists arrive sorted without repeats, which one pass over them tells.
	for i := 1; i < len(s); i++ {
		if compareItems(s[i-1], s[i]) >= 0 {
			slices.SortFunc(s, compareItems)
			return slices.Compact(s)
		}
	}
	return s
}

func (s items) contains(it item) bool {
	_, ok := slices.BinarySearchFunc(s, it, compareItems)
	return ok
}

// minus returns the items of s not in o.
func (s items) minus(o items) items {
	var out items
	for _, it := range s {
		if !o.contains(it) {
			out = append(out, it)
		}
	}
	return out
}

// intersect returns the items of s also in o.
func (s items) intersect(o items) items {
	var out items
	for _, it := range s {
		if o.contains(it) {
			out = append(out, it)
		}
	}
	return out
}

// topicItems converts a record's topic-id partitions.
func topicItems(tps []recordcodec.TopicPartitions) items {
	var out items
	for _, tp := range tps {
		id := tp.TopicId.String()
		for _, p := range tp.Partitions {
			out = append(out, item{space: spaceTopicID, name: id, part: p})
		}
	}
	return out.normalize()
}

func topicItemsE(tps []recordcodec.TopicPartitionsWithEpochs) items {
	var out items
	for _, tp := range tps {
		id := tp.TopicId.String()
		for _, p := range tp.Partitions {
			out = append(out, item{space: spaceTopicID, name: id, part: p})
		}
	}
	return out.normalize()
}

// itemsCap is an empty list with room for n items (nil for none, as appending nothing leaves
// it).
func itemsCap(n int) items {
	if n == 0 {
		return nil
	}
	return make(items, 0, n)
}

// countTasks and countTasksE are the number of items of task lists, to size them at once.
func countTasks(ts []recordcodec.TaskIds) (n int) {
	for _, t := range ts {
		n += len(t.Partitions)
	}
	return n
}

func countTasksE(ts []recordcodec.TaskIdsWithEpochs) (n int) {
	for _, t := range ts {
		n += len(t.Partitions)
	}
	return n
}

func taskItems(out items, role uint8, ts []recordcodec.TaskIds) items {
	for _, t := range ts {
		name := strings.Clone(t.SubtopologyId) // one copy for the subtopology's tasks
		for _, p := range t.Partitions {
			out = append(out, item{space: spaceTask, role: role, name: name, part: p})
		}
	}
	return out
}

func taskItemsE(out items, role uint8, ts []recordcodec.TaskIdsWithEpochs) items {
	for _, t := range ts {
		name := strings.Clone(t.SubtopologyId) // one copy for the subtopology's tasks
		for _, p := range t.Partitions {
			out = append(out, item{space: spaceTask, role: role, name: name, part: p})
		}
	}
	return out
}

// names resolves topic ids to names.
type names map[string]string

// assignments groups items into Assignments, naming topic ids where names knows them.
func (s items) assignments(n names) []Assignment {
	var out []Assignment
	for i := 0; i < len(s); {
		j := i
		a := Assignment{}
		switch it := s[i]; it.space {
		case spaceTopic:
			a.Topic = it.name
		case spaceTopicID:
			a.TopicID, a.Topic = it.name, n[it.name]
		case spaceTask:
			a.Subtopology, a.Role = it.name, roleNames[it.role]
		}
		for ; j < len(s) && s[j].space == s[i].space && s[j].role == s[i].role && s[j].name == s[i].name; j++ {
			a.Partitions = append(a.Partitions, s[j].part)
		}
		out = append(out, a)
		i = j
	}
	return out
}

// label renders items the way an operator reads them: "s2-in:0-2,5", or for tasks
// "active 0_1,1_1 standby 1_0" (Kafka's task ids, subtopology_partition). Topic ids with no
// known name show as their first 8 characters.
func (s items) label(n names) string { return assignmentsLabel(s.assignments(n)) }

func assignmentsLabel(as []Assignment) string {
	if len(as) == 0 {
		return "nothing"
	}
	var b strings.Builder
	prevRole := ""
	for i, a := range as {
		if a.Role != "" {
			if a.Role != prevRole {
				if i > 0 {
					b.WriteString(" ")
				}
				b.WriteString(a.Role + " ")
			} else {
				b.WriteString(",")
			}
			prevRole = a.Role
			for k, p := range a.Partitions {
				if k > 0 {
					b.WriteString(",")
				}
				b.WriteString(a.Subtopology + "_" + strconv.Itoa(int(p)))
			}
			continue
		}
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(topicLabel(a) + ":" + rangesLabel(a.Partitions))
	}
	return b.String()
}

func topicLabel(a Assignment) string {
	switch {
	case a.Topic != "":
		return a.Topic
	case len(a.TopicID) > 8:
		return "topic-id " + a.TopicID[:8]
	}
	return "topic-id " + a.TopicID
}

// rangesLabel renders sorted partitions as "0-2,5,7-9" (a run of three or more is a range).
func rangesLabel(ps []int32) string {
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(",")
		}
		switch {
		case j-i >= 2:
			b.WriteString(strconv.Itoa(int(ps[i])) + "-" + strconv.Itoa(int(ps[j])))
		case j == i+1:
			b.WriteString(strconv.Itoa(int(ps[i])) + "," + strconv.Itoa(int(ps[j])))
		default:
			b.WriteString(strconv.Itoa(int(ps[i])))
		}
		i = j + 1
	}
	return b.String()
}
