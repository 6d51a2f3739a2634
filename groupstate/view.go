package groupstate

// View is the read side of a State: every accessor, none of the Replay* mutators. It is what
// a State hands to anything outside the replay engine (describe, check, the timeline, the
// group coordinators), so that only replay changes the state.
//
// A View is a small value (one pointer) that reads the live state: it sees every later
// mutation, and reading it while a mutator runs is a data race. Everything a View returns is
// a copy (strings, which never change, may be shared) or, for the image writers, bytes
// appended to the caller's buffer.
//
// The zero View is not usable; get one from State.View.
type View struct{ s *State }

// View returns the read-only view of s.
func (s *State) View() View { return View{s} }

// Version returns the Kafka version whose rules the state applies.
func (v View) Version() KafkaVersion { return v.s.version }
