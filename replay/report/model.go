package report

// The picture model: what a page draws, in the log's units (Unix milliseconds on the time
// axis, or record offsets when a group's records carry no timestamps). It knows nothing of
// pixels: the layout (layout.go) maps it onto columns and aggregates what does not fit.

// Page is the picture of a log's groups.
type Page struct {
	// Input is what the report was made of (a path); Title the page's title.
	Input string
	Title string
	// Partitions are the __consumer_offsets partitions replayed, Records how many records
	// they had, Rules the replay rules ("Kafka 4.4 rules"); Window says which part of the
	// log is drawn ("" for all of it).
	Partitions []int32
	Records    int64
	Rules      string
	Window     string
	// Notes are what the reader must know to read the page right (groups left out, cuts).
	Notes []string
	// Overview lists every group of the input the filters keep (more than Groups when some
	// groups are not drawn); Groups are the drawn sections, in the overview's order.
	Overview []*Group
	Groups   []*Group
}

// Group is one group's history.
type Group struct {
	ID        string
	Type      string // classic, consumer, share, streams
	Partition int32
	// State is the group's state at the end of the replay ("Dead" when deleted), Members its
	// member count then.
	State   string
	Members int
	// LastActivity is the last record of the group (Time -1: none with a timestamp).
	LastActivity Src
	// Counts are the findings and totals of the overview.
	Counts Counts

	// Anchor is the section's fragment id ("g3"): group ids are free text, anchors are not.
	Anchor string
	// Drawn is false for a group listed in the overview only (MaxGroups).
	Drawn bool

	// Axis is the range the group's picture spans.
	Axis Axis

	// Epochs are the group epoch (or generation) steps; Rebalances the rebalances as spans
	// from their start to the record that completed them; Marks the group's own events
	// (created, converted, deleted, violations).
	Epochs     []Step
	Rebalances []Span
	Marks      []Mark
	// Lanes are the members, one lane per Member.Lane of the timeline's events (a static
	// member's replacements continue its lane).
	Lanes []*Lane
	// Assignment is, per topic-partition or task, who owned it (current) and who was meant
	// to (target) over time.
	Assignment []*AssignRow
	// Offsets are the committed offsets per topic-partition over time.
	Offsets []*Series
	// Transactions are the producers' pending offsets, as spans ending in commit or abort.
	Transactions []*TxnRow

	// Records are the events listed under the picture, the targets of its links; Unlisted
	// counts the events of the window left out of that list (Max rows per group).
	Records  []Record
	Unlisted int
	// Notes say what the group's picture left out or aggregated.
	Notes []string
}

// Counts are a group's totals and findings.
type Counts struct {
	Events     int
	Rebalances int
	Rewinds    int // committed offsets moved back
	Fenced     int // members removed by a timeout
	Stuck      int // rebalances open at the end, or slower than the threshold
	OpenTxns   int // transactions open at the end of the log
	Aborted    int // transactions aborted
	WhileEmpty int // offset commits while the group had no members
	Deletions  int // offsets deleted
	Violations int // records the replay refused
}

// Findings says whether the group has anything an operator should look at.
func (c Counts) Findings() bool {
	return c.Rewinds+c.Fenced+c.Stuck+c.OpenTxns+c.WhileEmpty+c.Violations > 0
}

// AxisUnit is what the horizontal axis measures.
type AxisUnit int

const (
	// UnitTime: Unix milliseconds (UTC).
	UnitTime AxisUnit = iota
	// UnitOffset: record offsets, for records without timestamps (magic v0).
	UnitOffset
)

// Axis is the horizontal range of a group's picture: [Start, End] in Unit.
type Axis struct {
	Unit       AxisUnit
	Start, End int64
	// ClippedStart is set when a time window (--since) cut the group's earlier history.
	ClippedStart bool
}

// Src is the record (or records) behind a mark: where it is in the log and what it is.
type Src struct {
	Partition          int32
	Offset, LastOffset int64
	// Time is the record's timestamp in Unix milliseconds (-1: none).
	Time int64
	// Records names the record types behind the mark ("ConsumerGroupMemberMetadata",
	// "OffsetCommit x6", "COMMIT marker").
	Records string
	// Kind is the timeline's event kind ("rebalance", "offsets-committed").
	Kind string
	// Row is the index of the event in Group.Records, -1 when it is not listed.
	Row int
}

// Record is one event listed under the picture.
type Record struct {
	Src   Src
	Text  string
	Marks []string
}

// Step is the group epoch (or generation) from X on.
type Step struct {
	X     int64
	Epoch int32
	Src   Src
}

// Span is something with a start and an end: a rebalance, a transaction, a lane segment.
type Span struct {
	Start, End int64
	// Class says how to draw it (a rebalance's outcome, a transaction's result, a member's
	// state): one of the classes of page.css.
	Class string
	// Label is a short name drawn inside when it fits ("epoch 4"); Text the hover text.
	Label string
	Text  string
	Src   Src
	// Open is set when the span had not ended at the end of the log (End is then the axis end).
	Open bool
}

// Mark is a point event on a track: a member joining, leaving, fenced; a conversion.
type Mark struct {
	X     int64
	Class string
	Text  string
	Src   Src
}

// Lane is one member (or one static instance across its member ids).
type Lane struct {
	Key string // Member.Lane
	// Name is the member's client id (and host); Detail its ids.
	Name   string
	Detail string
	// Color is the lane's index in the palette (assignment bars use it too).
	Color    int
	Segments []Span
	Marks    []Mark
}

// AssignRow is one topic-partition (or streams task) and its owners over time.
type AssignRow struct {
	Label   string
	Current []Owner
	Target  []Owner
}

// Owner is a member owning (or meant to own) a partition from Start to End.
type Owner struct {
	Start, End int64
	Lane       int // index into Group.Lanes
	Src        Src
	Open       bool
}

// Series is a topic-partition's committed offset over time.
type Series struct {
	Topic     string
	Partition int32
	Points    []Point
	Rewinds   int
}

// Point is a committed offset (or its deletion) from X on.
type Point struct {
	X      int64
	Value  int64
	Offset int64 // the record's offset (LastOffset of a transaction's marker)
	Time   int64 // the record's timestamp (-1: none)
	Flags  PointFlag
	Row    int // index into Group.Records, -1 when not listed
}

// PointFlag qualifies a committed offset.
type PointFlag uint8

const (
	// PointRewind: the offset moved back.
	PointRewind PointFlag = 1 << iota
	// PointWhileEmpty: written while the group had no members.
	PointWhileEmpty
	// PointWithoutOwner: written while no member owned the partition.
	PointWithoutOwner
	// PointTransactional: made visible by a transaction's commit marker.
	PointTransactional
	// PointDeleted: the offset was deleted (the series has no value from here on).
	PointDeleted
)

// TxnRow is one producer's transactions that wrote offsets of the group.
type TxnRow struct {
	ProducerID int64
	Spans      []Span
}
