package explain

import (
	"strconv"
	"strings"
)

// What to look at next, for the marked events (Event.Next). INPUT stands for the input of the
// command that prints it, which replaces it.

// shellArg quotes s for a shell command line when it needs it.
func shellArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:/@=+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func timelineCmd(group string, args ...string) string {
	s := "`replay timeline INPUT --group " + shellArg(group)
	for _, a := range args {
		s += " " + a
	}
	return s + "`"
}

// offsetsBefore is the command that shows the group's offsets just before the batch at.
func offsetsBefore(group string, at Position) string {
	return "`replay offsets INPUT --group " + shellArg(group) + " --at-offset " +
		strconv.Itoa(int(at.Partition)) + ":" + strconv.FormatInt(at.BatchBase-1, 10) + "` shows them just before"
}

func fencedNext(group string, r *Removal) string {
	s := timelineCmd(group, "--member", shellArg(r.Member.ID)) + " for its story; then the client's log at that time: "
	if r.Cause == "fenced-rebalance-timeout" {
		return s + "a partition revocation (onPartitionsRevoked) slower than its rebalance timeout (max.poll.interval.ms)"
	}
	return s + "a crash, a stall longer than the session timeout (GC, a blocked poll loop) or a network partition"
}

func slowNext(group string, r *Rebalance) string {
	return timelineCmd(group, "--kind", "reconcile", "--since", r.Start.Time().Format("2006-01-02T15:04:05.000Z")) +
		": who waited for whom; then the slow member's partition revocation (onPartitionsRevoked) and poll loop"
}

func offsetsNext(group string, e *Event) string {
	topic := ""
	if o := e.Offsets; o != nil && len(o.Changes) > 0 {
		topic = "--topic " + shellArg(o.Changes[0].Topic)
	}
	s := timelineCmd(group, topic) + " for the commits around it; then "
	switch e.Offsets.Writer.Kind {
	case "empty-group":
		return s + "who ran kafka-consumer-groups --reset-offsets, or which consumer uses this group.id with assign() " +
			"(the brokers' request logs name the client of each OffsetCommit)"
	case "without-owner":
		return s + "which client committed partitions it did not own: a consumer after losing them in a rebalance, or a " +
			"standalone consumer sharing the group.id"
	case "owner", "owners":
		return s + "the owner's log: a seek() back, a restart from an older position, or commits sent out of order"
	}
	return s + "the client that commits for this group: a seek() back, a reset, or commits sent out of order"
}

func deletionNext(group string, d *Deletion, at Position) string {
	s := offsetsBefore(group, at) + "; "
	switch d.Cause {
	case "group-deletion", "cleanup":
		return s + "who deleted the group: the brokers' request logs (DeleteGroups)"
	case "expiry":
		return s + "offsets.retention.minutes on the brokers: a group's offsets expire once it has been empty that " +
			"long, and those of topics it stopped consuming even while it is active"
	case "topic-deletion":
		return s + "the topic deletions at that time (the controller's log)"
	}
	return s + "who deleted them: the brokers' request logs (OffsetDelete), or the topic deletions at that time"
}

func txnNext(pid int64) string {
	return "the producer with id " + strconv.FormatInt(pid, 10) + " (kafka-transactions --describe-producers): a stalled " +
		"transaction holds back read_committed consumers of every partition it wrote"
}
