package cluster

import "github.com/coordlog/coordlog/groupstate"

// LagRow is one committed offset with its partition's log end offset and the lag, as
// kafka-consumer-groups --describe prints them (CURRENT-OFFSET, LOG-END-OFFSET, LAG).
type LagRow struct {
	groupstate.CommittedOffset
	// LogEnd is the partition's log end offset now; nil when the topic or partition is not on
	// the cluster (Missing says why).
	LogEnd *int64 `json:"logEndOffset"`
	// Lag is LogEnd - CommittedOffset, never below 0 (nil without LogEnd).
	Lag     *int64 `json:"lag"`
	Missing string `json:"missing,omitempty"`
}

// Lag joins committed offsets with the logs' end offsets.
func Lag(offs []groupstate.CommittedOffset, logs TopicLogs) []LagRow {
	out := make([]LagRow, 0, len(offs))
	for _, o := range offs {
		r := LagRow{CommittedOffset: o}
		if err, missing := logs.Missing[o.Topic]; missing {
			r.Missing = "topic not on the cluster: " + err.Error()
		} else if lo, ok := logs.Partitions[TopicPartition{o.Topic, o.Partition}]; ok {
			end := lo.End
			lag := max(end-o.CommittedOffset, 0)
			r.LogEnd, r.Lag = &end, &lag
		} else {
			r.Missing = "partition not on the cluster"
		}
		out = append(out, r)
	}
	return out
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
