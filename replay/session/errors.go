package session

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
type ReplayError struct{ Err error }

func (e *ReplayError) Error() string { return e.Err.Error() }
func (e *ReplayError) Unwrap() error { return e.Err }
