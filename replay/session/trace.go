package session

import (
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/recovery"
)

// Trace is told what a request does while it does it, as net/http/httptrace's ClientTrace is:
// the commands print these steps on stderr as they happen (where a point fell, which snapshot
// a partition was restored from), a service may log them. Any field may be nil.
type Trace struct {
	// Resolved is called once the point is placed in every selected partition, before
	// anything is replayed.
	Resolved func(at query.Point, positions []query.Position)
	// Detected is told which Kafka release the records show wrote the log
	// (Request.DetectVersion), before the replay.
	Detected func(replay.VersionDetection)
	// Restored is called for each partition restored from a snapshot (FromSnapshot, Restart),
	// before the next one: rec.Snapshot is nil when no snapshot was usable and the whole log
	// was replayed.
	Restored func(p int32, rec *recovery.Recovery)
	// Done is called when a request is done reading the source, whether it succeeded or not:
	// the source's Report is complete then.
	Done func(src *Source)
}

func (t *Trace) resolved(at query.Point, pos []query.Position) {
	if t != nil && t.Resolved != nil {
		t.Resolved(at, pos)
	}
}

func (t *Trace) detected(d replay.VersionDetection) {
	if t != nil && t.Detected != nil {
		t.Detected(d)
	}
}

func (t *Trace) restored(p int32, rec *recovery.Recovery) {
	if t != nil && t.Restored != nil {
		t.Restored(p, rec)
	}
}

func (t *Trace) done(src *Source) {
	if t != nil && t.Done != nil && src != nil {
		t.Done(src)
	}
}
