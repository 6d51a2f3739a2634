// Package session is coordlog's way in for a Go program: it opens a __consumer_offsets log of
// any kind and brings its partitions' state to a point in history, as every replay command
// does. What `replay describe --at-time T` does is Open, Replay with Request.At, and reading
// each partition's groupstate.View (Example).
//
// # Inputs
//
// Open takes an Input: a path (a __consumer_offsets-N directory, a log directory holding
// several, a coordlog Pebble database; eventlog/input tells them apart) or a live cluster
// (cluster.Config: bootstrap brokers, TLS, SASL; eventlog/live reads the topic up to each
// partition's high watermark). Mode says whether damaged input stops the reading (strict) or
// is skipped and reported (forensic: Source.Report). Any eventlog.Source can be wrapped as a
// Source too (&Source{Source: src, Name: ...}).
//
// # Requests
//
// Replay brings the partitions a Request selects to its point: Select picks them (the
// partitions asked for, else those an --at-offset P:OFFSET list names, else all), Resolve
// places the point in each (replay/query: an offset, or a time cut before the first record
// stamped later), and the engines replay up to it: in parallel, or one partition after the
// other when observers print as they go. FromSnapshot (a database) restores each partition
// from its newest usable snapshot at or before its point and replays only the log after it
// (replay/recovery). Between replays one log to two points at once (a diff); Follow keeps a
// Replayed up to date with a cluster topic that grows. Observers keeps one observer per
// partition for requests whose partitions replay in parallel.
//
// The database side: LockDatabase takes a writer's lock (and refuses a database whose
// in-place compaction was interrupted), OpenImport and Importer copy a source into a database
// (idempotent, resumable, refusing another log's database), OpenDatabase opens one with its
// snapshot store for TakeSnapshots and Restart, and LogWriter appends a coordinator's batches
// to a database or a new segment directory.
//
// # Errors and tracing
//
// A request the source cannot satisfy as asked (a partition it does not have, a point outside
// a partition's log, options that exclude each other) is a *RequestError: the commands exit 2
// on it, a service answers that the request is bad. A replay that stops (strict mode at a
// violation or damaged input, or an input that fails) is a *ReplayError. Connection settings
// that cannot work are cluster's *ConfigError. A Trace, like net/http/httptrace's, is told the
// steps while they happen: where the point fell, which snapshot a partition came from, when
// the source has been read (its Report complete); the commands print them on stderr.
//
// # Invariants
//
//   - The library prints nothing and reads no flag: what the commands print comes from its
//     results and its Trace.
//   - No wall clock: the times of points are the caller's (query.ParseTime takes "now");
//     snapshot creation times come from SnapshotRequest.Now.
//   - A Replayed's states change only in Follow, between calls of its callback.
package session
