// Package query answers the questions an on-call engineer brings to a __consumer_offsets log,
// on top of the replay engine: where a point in history falls (Resolve, Since), what describe
// shows of each partition (Describe), which committed offsets a listing shows and how far
// behind their partitions' log ends they are (OffsetSelection, Lag), which groups exist and
// which were deleted (ListGroups, Activity), how a group's rebalances add up (RebalanceTally),
// what changed between two points or two inputs (Diff), how close a mistyped group name is to
// real ones (Suggest), and the offsets as Kafka's own reset tool reads them (WriteResetCSV,
// ResetCommands).
//
// # Points in history
//
// A Point is the end of the log, an offset (one for an input of one partition, else one per
// named partition: partitions' offsets are unrelated), or an instant. ParseOffsets and
// ParseTime read what users type (--at-offset 41, --at-offset 0:41,3:7, --at-time
// 2026-02-20T14:05:00Z, --at-time -2h); a malformed value, a negative offset (never a silent
// "end"), a time without a zone are errors wrapping ErrBadPoint. Resolve places a Point in each
// partition as a Position: the exclusive replay bound Until, the last record in the state (the
// record the point resolves to), the first record after it, and for times how timestamps were
// read. Rules:
//
//   - An offset is the state after the record at that offset; it must lie between the
//     partition's first offset and its last, else a PointError names the range (an offset past
//     the end, or below a log start moved by retention, is never clamped). An offset in a
//     compaction gap is the state after the last record before it, said in Notes.
//   - A time cuts each partition before its first record stamped later than the instant, as
//     Kafka's ListOffsets by timestamp places it; records are read in offset order, a record's
//     time is Kafka's (Batch.RecordTimestamp: CreateTime the record's own, LogAppendTime the
//     batch's max timestamp, magic 0 none, such records staying with the ones before them).
//     Timestamps going backwards before the cut are reported, never silently reordered.
//   - Positions feed replay.ReplayCuts (Cuts): each partition replays to its own bound.
//
// # Describe and offsets
//
// Describe reads, for each partition, the groups a DescribeFilter selects (one group, some
// types) one at a time (PartitionDescription.Groups: a state may hold millions), the committed
// offsets of groups that no longer exist, the open transactions (those holding the group's
// offsets, with a group), and the names the records give topic ids (Names: across every
// partition, ids being the cluster's). An OffsetSelection picks committed offsets by group and
// by the groups' own topics and topic-partitions (OffsetFilter; Missing names what the filter
// asks for and no offset has), reads them one group at a time (Groups, Offsets, All), keeps
// the open transactions' offsets it selects (Pending), and collects what a reset file or a
// restore needs (ForReset, GroupOffsets). Lag joins committed offsets with the log end offsets
// it is given (LogEnds: cluster.TopicLogs reads them from a live cluster), never below 0.
//
// # Groups
//
// ListGroups reads the states of the partitions: one GroupRow per group with what Kafka's
// ListGroups reports (type, protocol type, state, simple) and what the state knows besides
// (members, epochs, committed and pending offsets). An Activity observer, watching the replay,
// adds the last record that touched each group (a record keyed by it, or the marker that ended
// a transaction holding its offsets) and, for groups that existed and no longer do, the record
// that removed them. Rows sort by group id.
//
// # Diff
//
// Diff compares two Sides (each the Dump of every partition at one point, Capture) group by
// group, matched by id across partitions: groups added, removed, changed type or state; epoch
// and field changes; members joined or left, their epochs, states and assignments (topic ids
// shown as names where the log names them); committed offsets committed, moved (with the
// delta), deleted or changed; pending transactional offsets. Changes of record offsets and
// timestamps alone are Volatile and left out unless asked. The order is deterministic.
//
// # Invariants
//
//   - No wall clock: "now" for relative times is an argument; the same log and point give the
//     same positions, rows and changes.
//   - Nothing silently: an offset outside a partition, a bare offset for several partitions, a
//     partition not read, a group that does not exist are errors with what to do instead.
package query
