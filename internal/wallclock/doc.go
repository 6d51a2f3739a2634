// Package wallclock is the commands' one reading of the wall clock: the creation time stamped
// on snapshots, the instant relative times (--at-time -2h) count back from, compact's default
// --now.
//
// COORDLOG_NOW, when set, replaces the wall clock with a fixed instant (RFC 3339, or Unix
// milliseconds): every reading returns it. It exists so that a run can be repeated exactly on
// any day (fixtures/transcripts.sh runs every command once on the real clock and once with
// COORDLOG_NOW on a recording's own timestamps, and both must give the same transcripts), and
// so that a test can put "now" where it needs it. A value that does not parse is an error the
// commands report as a usage error, never silently ignored.
//
// Durations (how long a step took) are not readings of this clock: they come from time.Since,
// on the monotonic clock, and are never faked.
package wallclock
