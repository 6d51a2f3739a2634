// Package leakcheck tells whether goroutines that run given code outlive the call that started
// them. It reads every goroutine's stack (runtime.Stack) and looks for frames of the named
// functions, so goroutines of other tests running meanwhile, and the runtime's own, never
// count: a check that compares runtime.NumGoroutine() before and after is fooled by both
// (under -race in a full package run, TestSnapshotWriteFailureStopsEncoders was).
package leakcheck

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Running returns the stacks of the goroutines, other than the caller's, that have a frame of
// a function whose fully qualified name starts with one of prefixes (for example
// "github.com/coordlog/coordlog/replay.ReplaySource").
func Running(prefixes ...string) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 {
			continue // the caller's own goroutine comes first
		}
		for _, line := range strings.Split(string(g), "\n") {
			if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "goroutine ") || strings.HasPrefix(line, "created by ") {
				continue // file lines, the header, the creator (not running it)
			}
			if matches(line, prefixes) {
				out = append(out, string(g))
				break
			}
		}
	}
	return out
}

func matches(frame string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(frame, p) {
			return true
		}
	}
	return false
}

// None fails t if, once wait has passed, a goroutine still runs a function with one of the
// prefixes. It checks at once and then polls until wait, because a goroutine may take a moment
// to return even from code that waits for it: a deferred WaitGroup.Done lets the waiter go on
// while the goroutine is still on its way out (seen under -race). So None proves that
// goroutines end, not when; a test that must know nothing ran after a call returned records
// that itself.
func None(t testing.TB, wait time.Duration, prefixes ...string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		left := Running(prefixes...)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutine(s) left running %s:\n%s", len(left), strings.Join(prefixes, " or "), strings.Join(left, "\n\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
