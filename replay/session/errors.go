package session

import (
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

// RequestError is a request the session cannot carry out as asked, whatever the log holds: a
// partition the input does not have, a point outside a partition's log, settings that
// exclude each other. The commands exit 2 on it (a usage error); a service would answer that
// the request is bad, not that it failed.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// ReplayError is a replay that stopped: in strict mode at a violation (a record Kafka's loader
// fails on) or at damaged input, which forensic mode (eventlog.Forensic) records and carries
// on past; or for any other reason the reading failed.
type ReplayError struct {
	Err error
	// Engines are the partitions replayed one after the other (Request.Sequential) up to the
	// stop, the one that stopped last: what they read so far (their counters) is known.
	Engines []*replay.Engine
}

// UnknownRecordsWarning is Replayed.UnknownRecordsWarning for what the engines read before
// the stop, under version's rules.
func (e *ReplayError) UnknownRecordsWarning(version groupstate.KafkaVersion) string {
	return unknownRecords(version, e.Engines)
}

func (e *ReplayError) Error() string { return e.Err.Error() }
func (e *ReplayError) Unwrap() error { return e.Err }
