package cluster

import "github.com/coordlog/coordlog/groupstate"

// LogEnd returns the log end offset of topic's partition, or why there is none: the topic or
// the partition is not on the cluster (replay/query.Lag joins committed offsets with them).
func (l TopicLogs) LogEnd(topic string, partition int32) (end int64, missing string) {
	if err, gone := l.Missing[topic]; gone {
		return 0, "topic not on the cluster: " + err.Error()
	}
	lo, ok := l.Partitions[TopicPartition{topic, partition}]
	if !ok {
		return 0, "partition not on the cluster"
	}
	return lo.End, ""
}

// Topics returns the distinct topics of offs, in order of first appearance.
func Topics(offs []groupstate.CommittedOffset) []string {
	seen := map[string]bool{}
	var out []string
	for _, o := range offs {
		if !seen[o.Topic] {
			seen[o.Topic] = true
			out = append(out, o.Topic)
		}
	}
	return out
}
