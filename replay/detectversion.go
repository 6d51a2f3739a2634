package replay

import (
	"context"
	"fmt"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Which Kafka release wrote a log, from what only some releases write (recordcodec's
// schema.txt and ../shared/spec/kafka-records.md §2.8):
//
//   - OffsetCommit value v4 (a topic id): 4.1+; v3: 4.0 or older (4.1+ writes v4, or v1 with
//     an expire timestamp).
//   - streams records (ids 17, 19-23): 4.1+; a ConsumerGroupMetadata metadata hash: 4.1+.
//   - StreamsGroupMetadata's validated topology epoch or last assignment configs, or active
//     tasks' assignment epochs in StreamsGroupCurrentMemberAssignment: 4.2+ (their absence
//     from active tasks: 4.1).
//   - an assignment timestamp in a target assignment metadata record (ids 6, 12, 20), or
//     assignment epochs in ConsumerGroupCurrentMemberAssignment: 4.3+ (assigned partitions
//     without epochs: 4.2 or older; a target record without a timestamp says nothing).
//   - StreamsGroupMetadata's stored or failed description topology epoch: 4.4+.
//   - ShareGroupPartitionMetadata (id 9) values: 4.0.
//
// The newest release whose records the log holds is the one that loaded it last: its rules
// replay it. When the log narrows the writer to a range, the newest release in it is chosen.

// VersionDetection is what the records say of the Kafka release that wrote them.
type VersionDetection struct {
	// Version is the rules chosen: the newest release the records allow (the newest
	// release that wrote any of them, when they come from several: an upgrade).
	Version groupstate.KafkaVersion
	// Lo and Hi bound the writer (Lo > Hi: records of several releases); LoWhy and HiWhy say
	// which record set each bound ("" for none: Lo is 4.0, Hi the newest supported).
	Lo, Hi       groupstate.KafkaVersion
	LoWhy, HiWhy string
	// Records is how many records were read; Complete is false when the budget stopped the
	// reading before the end of a partition.
	Records  int64
	Complete bool
}

// versionDetector narrows the writer's release record by record.
type versionDetector struct {
	d VersionDetection
}

func newVersionDetector() *versionDetector {
	return &versionDetector{d: VersionDetection{Lo: groupstate.Kafka40, Hi: groupstate.DefaultKafkaVersion, Complete: true}}
}

func (v *versionDetector) atLeast(ver groupstate.KafkaVersion, p int32, off int64, what string) {
	if ver > v.d.Lo {
		v.d.Lo, v.d.LoWhy = ver, fmt.Sprintf("%s at %d:%d (%s+)", what, p, off, ver)
	}
}

func (v *versionDetector) atMost(ver groupstate.KafkaVersion, p int32, off int64, what string) {
	if ver < v.d.Hi {
		v.d.Hi, v.d.HiWhy = ver, fmt.Sprintf("%s at %d:%d (%s or older)", what, p, off, ver)
	}
}

// pinned reports whether nothing more can be learnt.
func (v *versionDetector) pinned() bool { return v.d.Lo >= v.d.Hi }

// record narrows by one decoded record's value (tombstones say nothing).
func (v *versionDetector) record(p int32, off int64, r *recordcodec.Record) {
	switch x := r.Value.(type) {
	case *recordcodec.OffsetCommitValue:
		switch x.Version {
		case 4:
			v.atLeast(groupstate.Kafka41, p, off, "an OffsetCommit value v4 (with a topic id)")
		case 3:
			v.atMost(groupstate.Kafka40, p, off, "an OffsetCommit value v3")
		}
	case *recordcodec.ConsumerGroupMetadataValue:
		if x.MetadataHash != 0 {
			v.atLeast(groupstate.Kafka41, p, off, "a ConsumerGroupMetadata metadata hash")
		}
	case *recordcodec.ShareGroupPartitionMetadataValue:
		v.atMost(groupstate.Kafka40, p, off, "a ShareGroupPartitionMetadata value")
	case *recordcodec.StreamsGroupMetadataValue:
		v.atLeast(groupstate.Kafka41, p, off, "a streams group record")
		if x.ValidatedTopologyEpoch != -1 || x.LastAssignmentConfigs != nil {
			v.atLeast(groupstate.Kafka42, p, off, "a StreamsGroupMetadata validated topology epoch")
		}
		if x.StoredDescriptionTopologyEpoch != -1 || x.FailedDescriptionTopologyEpoch != -1 {
			v.atLeast(groupstate.Kafka44, p, off, "a StreamsGroupMetadata description topology epoch")
		}
	case *recordcodec.StreamsGroupCurrentMemberAssignmentValue:
		v.atLeast(groupstate.Kafka41, p, off, "a streams group record")
		if len(x.ActiveTasks) > 0 {
			if len(x.ActiveTasks[0].AssignmentEpochs) > 0 {
				v.atLeast(groupstate.Kafka42, p, off, "active tasks' assignment epochs")
			} else {
				v.atMost(groupstate.Kafka41, p, off, "active tasks without assignment epochs")
			}
		}
	case *recordcodec.ConsumerGroupCurrentMemberAssignmentValue:
		if len(x.AssignedPartitions) > 0 && len(x.AssignedPartitions[0].Partitions) > 0 {
			if len(x.AssignedPartitions[0].AssignmentEpochs) > 0 {
				v.atLeast(groupstate.Kafka43, p, off, "assigned partitions' assignment epochs")
			} else {
				v.atMost(groupstate.Kafka42, p, off, "assigned partitions without assignment epochs")
			}
		}
	case *recordcodec.ConsumerGroupTargetAssignmentMetadataValue:
		v.target(p, off, x.AssignmentTimestamp)
	case *recordcodec.ShareGroupTargetAssignmentMetadataValue:
		v.target(p, off, x.AssignmentTimestamp)
	case *recordcodec.StreamsGroupTargetAssignmentMetadataValue:
		v.atLeast(groupstate.Kafka41, p, off, "a streams group record")
		v.target(p, off, x.AssignmentTimestamp)
	default:
		if t := r.Key.Type; t >= recordcodec.StreamsGroupMetadata && t <= recordcodec.StreamsGroupTopology && r.Value != nil {
			v.atLeast(groupstate.Kafka41, p, off, "a streams group record")
		}
	}
}

// target: an assignment timestamp is 4.3+ (its absence says nothing: 4.3+ leaves it out of
// some target records).
func (v *versionDetector) target(p int32, off int64, ts int64) {
	if ts != 0 {
		v.atLeast(groupstate.Kafka43, p, off, "a target assignment's timestamp")
	}
}

func (v *versionDetector) result() VersionDetection {
	d := v.d
	d.Version = d.Hi
	if d.Lo > d.Hi {
		d.Version = d.Lo // records of several releases: the newest loaded the log last
	}
	return d
}

// DefaultDetectRecords is the most records DetectVersion reads before it decides.
const DefaultDetectRecords = 1 << 20

// DetectVersion reads the records of parts (from each partition's start, at most maxRecords in
// all) until they pin the Kafka release that wrote them, and returns what they say. Records it
// cannot decode say nothing, and a batch it cannot read ends the reading (the replay reports
// both).
func DetectVersion(ctx context.Context, src eventlog.Source, parts []int32, maxRecords int64) (VersionDetection, error) {
	v := newVersionDetector()
	var dec recordcodec.Decoder
	for _, p := range parts {
		it, err := src.Batches(p, 0)
		if err != nil {
			return VersionDetection{}, err
		}
		for it.Next() && !v.pinned() {
			if err := ctx.Err(); err != nil {
				it.Close()
				return VersionDetection{}, err
			}
			b := it.Batch()
			if b.Attributes.Control() {
				continue
			}
			for i := range b.Records {
				r := &b.Records[i]
				v.d.Records++
				if rec, err := dec.Record(r.Key, r.Value); err == nil {
					v.record(p, r.Offset, &rec)
				}
			}
			if v.d.Records >= maxRecords {
				v.d.Complete = false
				break
			}
		}
		if it.Err() != nil {
			// Damaged input: the replay reports it where it stops (or skips it, forensic);
			// what was read so far is what the records say.
			v.d.Complete = false
		}
		it.Close()
		if v.pinned() || !v.d.Complete {
			break
		}
	}
	return v.result(), nil
}

// Note is the line a command prints on stderr: which rules, detected from what.
func (d VersionDetection) Note() string {
	var why []string
	if d.LoWhy != "" {
		why = append(why, d.LoWhy)
	}
	if d.HiWhy != "" {
		why = append(why, d.HiWhy)
	}
	s := "rules: Kafka " + d.Version.String()
	switch {
	case len(why) == 0:
		s += " (no record says which release wrote the log: the newest supported)"
	case d.Lo > d.Hi:
		s += ", the newest release that wrote the log (" + strings.Join(why, "; ") + ")"
	case d.Lo == d.Hi:
		s += ", detected (" + strings.Join(why, "; ") + ")"
	default:
		s += ", the newest of " + d.Lo.String() + "-" + d.Hi.String() + " the records allow (" + strings.Join(why, "; ") + ")"
	}
	if !d.Complete {
		s += fmt.Sprintf(", from the first %d records", d.Records)
	}
	return s
}

// UnknownRecordsWarning is the warning a command prints when the replay skipped records of
// types the chosen rules do not know ("" when it skipped none).
func UnknownRecordsWarning(v groupstate.KafkaVersion, results []Result) string {
	var n int64
	for _, r := range results {
		if r.Engine != nil {
			n += r.Engine.Stats().UnknownTypes
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("warning: %d records of types Kafka %s's rules do not know were skipped, as that release skips them "+
		"(a newer release's records? --kafka-version chooses other rules; `replay check` says where)", n, v)
}
