package query

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
)

// OffsetFilter selects committed offsets by topic and topic-partition (partitions of the
// group's topics, never __consumer_offsets partitions).
type OffsetFilter struct {
	Topics          map[string]bool
	TopicPartitions map[string]map[int32]bool // topic -> partitions
}

// ParseTopicPartitions reads "orders:0", "orders:0,3" or several such values.
func ParseTopicPartitions(values []string) (map[string]map[int32]bool, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := map[string]map[int32]bool{}
	for _, v := range values {
		i := strings.LastIndexByte(v, ':')
		if i <= 0 || i == len(v)-1 {
			return nil, badf("--topic-partition %q: want TOPIC:PARTITION[,PARTITION...] (a partition of the group's topic, e.g. orders:3)", v)
		}
		t := v[:i]
		for _, s := range strings.Split(v[i+1:], ",") {
			p, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
			if err != nil || p < 0 {
				return nil, badf("--topic-partition %q: %q is not a partition number", v, s)
			}
			if out[t] == nil {
				out[t] = map[int32]bool{}
			}
			out[t][int32(p)] = true
		}
	}
	return out, nil
}

// Empty reports whether the filter keeps everything.
func (f OffsetFilter) Empty() bool { return len(f.Topics) == 0 && len(f.TopicPartitions) == 0 }

// Keep reports whether the offset of topic t, partition p passes: with both lists, an offset
// passes when either names it.
func (f OffsetFilter) Keep(t string, p int32) bool {
	if f.Empty() {
		return true
	}
	return f.Topics[t] || f.TopicPartitions[t][p]
}

// Missing returns the topics and topic-partitions the filter names that none of offs has, so
// that a typo is said instead of printing nothing.
func (f OffsetFilter) Missing(offs []groupstate.CommittedOffset) []string {
	hasT := map[string]bool{}
	hasTP := map[tpKey]bool{}
	for _, o := range offs {
		hasT[o.Topic] = true
		hasTP[tpKey{o.Topic, o.Partition}] = true
	}
	var out []string
	for t := range f.Topics {
		if !hasT[t] {
			out = append(out, t)
		}
	}
	for t, ps := range f.TopicPartitions {
		for p := range ps {
			if !hasTP[tpKey{t, p}] {
				out = append(out, fmt.Sprintf("%s:%d", t, p))
			}
		}
	}
	slices.Sort(out)
	return out
}

// WriteResetCSV writes offs as kafka-consumer-groups --reset-offsets --from-file reads them
// (GroupOffsetsResetter.parseResetPlan, Jackson's CSV without a header): "topic,partition,offset"
// lines when they are all of one group and the command names that group with one --group,
// "group,topic,partition,offset" lines otherwise. Kafka splits the file on "\n" before parsing
// a line, so a group id holding a line break cannot be written (an error); a field holding a
// comma or a quote is quoted as Jackson does. offs must be sorted by group, topic, partition
// (as groupstate returns them).
func WriteResetCSV(w io.Writer, offs []groupstate.CommittedOffset, withGroup bool) error {
	bw := bufio.NewWriter(w)
	for _, o := range offs {
		if strings.ContainsAny(o.GroupID, "\r\n") {
			return fmt.Errorf("group id %q holds a line break: kafka-consumer-groups --from-file cannot read it", o.GroupID)
		}
		if withGroup {
			bw.WriteString(csvField(o.GroupID))
			bw.WriteByte(',')
		}
		bw.WriteString(csvField(o.Topic))
		bw.WriteByte(',')
		bw.WriteString(strconv.Itoa(int(o.Partition)))
		bw.WriteByte(',')
		bw.WriteString(strconv.FormatInt(o.CommittedOffset, 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"") && strings.TrimSpace(s) == s {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// ResetCommand is the command line of Kafka's own tool that applies a CSV written by
// WriteResetCSV: kafka-consumer-groups.sh for classic and consumer groups,
// kafka-streams-groups.sh for streams groups (one line per tool needed), with --dry-run; the
// user swaps it for --execute after reading Kafka's preview. bootstrap and file may be
// placeholders.
type ResetCommand struct {
	Tool   string   // kafka-consumer-groups.sh or kafka-streams-groups.sh
	Groups []string // sorted
	Args   []string
	// Warning is what the tool does beyond the offsets (kafka-streams-groups --execute also
	// deletes the group's internal topics).
	Warning string
}

// Line renders the command with shell quoting.
func (c ResetCommand) Line() string {
	parts := []string{c.Tool}
	for _, a := range c.Args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// ResetCommands returns the commands that apply the CSV of these groups (types by group id).
func ResetCommands(types map[string]groupstate.GroupType, bootstrap, file string) []ResetCommand {
	var consumer, streams []string
	for g, t := range types {
		if t == groupstate.GroupTypeStreams {
			streams = append(streams, g)
		} else {
			consumer = append(consumer, g)
		}
	}
	slices.Sort(consumer)
	slices.Sort(streams)
	var out []ResetCommand
	mk := func(tool string, groups []string) ResetCommand {
		args := []string{"--bootstrap-server", bootstrap}
		for _, g := range groups {
			args = append(args, "--group", g)
		}
		args = append(args, "--reset-offsets", "--from-file", file, "--dry-run")
		return ResetCommand{Tool: tool, Groups: groups, Args: args}
	}
	if len(consumer) > 0 {
		out = append(out, mk("kafka-consumer-groups.sh", consumer))
	}
	if len(streams) > 0 {
		c := mk("kafka-streams-groups.sh", streams)
		c.Warning = "kafka-streams-groups --reset-offsets --execute also deletes the group's internal topics (repartition and changelog topics); coordlog's offsets restore commits the offsets only"
		out = append(out, c)
	}
	return out
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
