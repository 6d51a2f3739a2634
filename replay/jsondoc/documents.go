package jsondoc

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/coordlog/coordlog/cluster"
	"github.com/coordlog/coordlog/replay/audit"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

// Groups is replay groups' document (docs/json/groups.schema.json): one row per group.
type Groups struct {
	SchemaVersion int              `json:"schemaVersion"`
	KafkaVersion  string           `json:"kafkaVersion"`
	AtOffset      *int64           `json:"atOffset"`
	AtTime        *string          `json:"atTime,omitempty"`
	Partitions    []Partition      `json:"partitions"`
	Groups        []query.GroupRow `json:"groups"`
}

// NewGroups is the groups document of r's rows.
func NewGroups(r *session.Replayed, rows []query.GroupRow) *Groups {
	doc := &Groups{SchemaVersion: SchemaVersion, KafkaVersion: r.Options.Version.String(), Partitions: Partitions(r), Groups: rows}
	doc.AtOffset, doc.AtTime = Point(r.At)
	if doc.Groups == nil {
		doc.Groups = []query.GroupRow{}
	}
	return doc
}

// Diff is replay diff's document (docs/json/diff.schema.json): what changed from one side to
// the other.
type Diff struct {
	SchemaVersion int               `json:"schemaVersion"`
	KafkaVersion  string            `json:"kafkaVersion"`
	From          DiffSide          `json:"from"`
	To            DiffSide          `json:"to"`
	Changes       []query.Change    `json:"changes"`
	Summary       []query.KindCount `json:"summary"`
}

// DiffSide says what one side of a diff is.
type DiffSide struct {
	Source string `json:"source"`
	// Start is the start of the log (an empty state): a diff of one input without a first
	// point.
	Start      bool        `json:"start,omitempty"`
	AtOffset   *int64      `json:"atOffset"`
	AtTime     *string     `json:"atTime,omitempty"`
	Partitions []Partition `json:"partitions"`
}

// NewDiff is the diff document of changes between two sides.
func NewDiff(kafkaVersion string, from, to DiffSide, changes []query.Change) *Diff {
	doc := &Diff{SchemaVersion: SchemaVersion, KafkaVersion: kafkaVersion, From: from, To: to, Changes: changes, Summary: query.Summarize(changes)}
	if doc.Changes == nil {
		doc.Changes = []query.Change{}
	}
	return doc
}

// Restart is replay restart's document (docs/json/restart.schema.json).
type Restart struct {
	SchemaVersion int                `json:"schemaVersion"`
	Partitions    []RestartPartition `json:"partitions"`
}

// RestartPartition is one partition's restart: the snapshot, the tail, the time of each phase.
type RestartPartition struct {
	Partition      int32    `json:"partition"`
	Snapshot       string   `json:"snapshot,omitempty"` // empty: full replay
	SnapshotOffset int64    `json:"snapshotOffset"`
	TailRecords    int64    `json:"tailRecords"`
	TailBatches    int64    `json:"tailBatches"`
	NextOffset     int64    `json:"nextOffset"`
	Groups         int      `json:"groups"`
	Offsets        int      `json:"offsets"`
	VerifyMs       float64  `json:"verifyMs"`
	DecodeMs       float64  `json:"decodeMs"`
	RestoreMs      float64  `json:"restoreMs"`
	TailMs         float64  `json:"tailMs"`
	CheckMs        float64  `json:"checkMs"`
	TotalMs        float64  `json:"totalMs"`
	Messages       []string `json:"messages,omitempty"`
	FullReplayMs   *float64 `json:"fullReplayMs,omitempty"`
	SameState      *bool    `json:"sameState,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// RestartOf renders one partition's restart.
func RestartOf(p int32, r *session.Restarted) RestartPartition {
	e := r.Engine
	d := RestartPartition{
		Partition: p, SnapshotOffset: r.SnapshotOffset, TailRecords: r.TailRecords, TailBatches: r.TailBatches,
		NextOffset: e.NextOffset(), Groups: e.State().NumGroups(), Offsets: e.State().NumOffsets(),
		VerifyMs: ms(r.Verify), DecodeMs: ms(r.Decode), RestoreMs: ms(r.Restore), TailMs: ms(r.Tail), CheckMs: ms(r.Check), TotalMs: ms(r.Total()),
		Messages: r.Messages(),
	}
	if r.Snapshot != nil {
		d.Snapshot = r.Snapshot.Name
	}
	if r.Full != nil {
		t, same := ms(r.Full.Took), r.Full.Same
		d.FullReplayMs, d.SameState = &t, &same
	}
	return d
}

// TimelineEvent is one line of replay timeline --format jsonl
// (docs/json/timeline.schema.json): an event with the schema version.
type TimelineEvent struct {
	SchemaVersion int `json:"schemaVersion"`
	*explain.Event
}

// TimelineLine renders ev as one line of JSON, with its newline; an event that cannot be
// rendered is a line saying why.
func TimelineLine(ev *explain.Event) []byte {
	b, err := json.Marshal(TimelineEvent{SchemaVersion: SchemaVersion, Event: ev})
	if err != nil {
		return fmt.Appendf(nil, "{\"schemaVersion\":1,\"error\":%q}\n", err.Error())
	}
	return append(b, '\n')
}

// Restore is replay offsets restore's document: the plan, and what was applied.
type Restore struct {
	SchemaVersion int              `json:"schemaVersion"`
	Bootstrap     string           `json:"bootstrapServer"`
	Source        string           `json:"source"`
	AtOffset      *int64           `json:"atOffset"`
	AtTime        *string          `json:"atTime,omitempty"`
	Partitions    []Partition      `json:"partitions"`
	Plan          cluster.Plan     `json:"plan"`
	Executed      bool             `json:"executed"`
	Applied       *cluster.Applied `json:"applied,omitempty"`
}

// NewRestore is the restore document of a plan made from r's offsets for the cluster at
// bootstrap.
func NewRestore(r *session.Replayed, bootstrap string, plan cluster.Plan) *Restore {
	doc := &Restore{SchemaVersion: SchemaVersion, Bootstrap: bootstrap, Source: r.Source.Name, Partitions: Partitions(r), Plan: plan}
	doc.AtOffset, doc.AtTime = Point(r.At)
	return doc
}

// Check is replay check's document (docs/json/check.schema.json): the findings of an audit.
type Check struct {
	SchemaVersion int              `json:"schemaVersion"`
	KafkaVersion  string           `json:"kafkaVersion"`
	Partitions    []int32          `json:"partitions"`
	Records       int64            `json:"records"`
	Placement     Placement        `json:"placement"`
	Findings      []Finding        `json:"findings"`
	Counts        map[string]int   `json:"counts"`
	Thresholds    map[string]int64 `json:"thresholds"`
}

// Placement says whether the groups' partitions were checked, against how many partitions.
type Placement struct {
	Checked       bool  `json:"checked"`
	NumPartitions int32 `json:"numPartitions"`
}

// Finding is one finding of an audit. FindingOf renders audit.Finding field by field: a field
// added to audit.Finding is added here, to FindingOf and to check.schema.json.
type Finding struct {
	Partition int32          `json:"partition"`
	Offset    *int64         `json:"offset"` // null: about the state at the end of the log
	Timestamp *int64         `json:"timestamp"`
	Time      *string        `json:"time"`
	Kind      string         `json:"kind"`
	Group     *string        `json:"group"`
	Detail    string         `json:"detail"`
	Next      *string        `json:"next"`
	Event     *explain.Event `json:"event"`
	Episode   *audit.Episode `json:"episode"`
	// Severity, Certainty, Evidence, Alternatives and Count: audit.Finding's.
	Severity     string                `json:"severity"`
	Certainty    string                `json:"certainty"`
	Evidence     []string              `json:"evidence"`
	Alternatives []explain.Alternative `json:"alternatives"`
	Count        int                   `json:"count"`
}

// FindingOf renders a finding: what the audit leaves out (an offset for the end of the log,
// a time, a group, a next step) is null.
func FindingOf(fd audit.Finding) Finding {
	f := Finding{Partition: fd.Partition, Kind: fd.Kind, Detail: fd.Detail, Event: fd.Event, Episode: fd.Episode,
		Severity: string(fd.Severity), Certainty: string(fd.Certainty), Evidence: nonNil(fd.Evidence),
		Alternatives: nonNil(fd.Alternatives), Count: fd.Count}
	if fd.Offset >= 0 {
		o := fd.Offset
		f.Offset = &o
	}
	if fd.Time >= 0 {
		ts, t := fd.Time, query.FormatMillis(fd.Time)
		f.Timestamp, f.Time = &ts, &t
	}
	if fd.Group != "" {
		g := fd.Group
		f.Group = &g
	}
	if fd.Next != "" {
		n := fd.Next
		f.Next = &n
	}
	return f
}

// CheckSummary is what an audit covered, besides its findings.
type CheckSummary struct {
	KafkaVersion  string
	Partitions    []int32
	Records       int64
	NumPartitions int32 // the topic's partition count placement was checked against (0: not checked)
	Thresholds    explain.Options
}

// NewCheck is the check document of findings.
func NewCheck(s CheckSummary, findings []audit.Finding) *Check {
	eo := s.Thresholds
	doc := &Check{SchemaVersion: SchemaVersion, KafkaVersion: s.KafkaVersion, Partitions: s.Partitions, Records: s.Records,
		Placement: Placement{Checked: s.NumPartitions > 0, NumPartitions: s.NumPartitions}, Findings: []Finding{}, Counts: map[string]int{},
		Thresholds: map[string]int64{"slowRebalanceMs": eo.SlowRebalanceMs, "longTransactionMs": eo.LongTransactionMs,
			"offsetsRetentionMs": eo.OffsetsRetentionMs, "sessionTimeoutMs": eo.SessionTimeoutMs}}
	if doc.Partitions == nil {
		doc.Partitions = []int32{}
	}
	for _, fd := range findings {
		doc.Findings = append(doc.Findings, FindingOf(fd))
		doc.Counts[fd.Kind]++
	}
	return doc
}
