// Package streamstest drives the streams group coordinator with scripts: a small language of
// joins, heartbeats, leaves, clock steps and topic changes (scenario.go), executed by a Runner
// that simulates Java clients, appends every decision to a Log and prints a transcript
// (requests, responses, records). The coordinator's tests, its property tests and
// `replay simulate` run on it. Run reads plain scripts and datadriven test files alike (the
// coordinator's scenario tests, coordinator/streams/testdata): it skips their expected-output
// blocks, so a test file's transcript is its directives, each followed by its expected output.
// A Log is anything that replays batches into a state the coordinator can read;
// *replay.Engine is one.
package streamstest
