// Package streamstest drives the streams group coordinator with scripts: a small language of
// joins, heartbeats, leaves, clock steps and topic changes (scenario.go), executed by a Runner
// that simulates Java clients, appends every decision to a Log and prints a transcript
// (requests, responses, records). The coordinator's tests, its property tests and
// `replay simulate` run on it. A Log is anything that replays batches into a state the
// coordinator can read; *replay.Engine is one.
package streamstest
