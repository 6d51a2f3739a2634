// Package eventlogtest holds test helpers for code that reads an eventlog.Source.
//
// Scribbling wraps a source so that every batch's key, value and header bytes are overwritten
// with pseudo-random bytes as soon as the iterator moves past it, which is what eventlog.Iterator's contract allows a
// source to do (iterators reuse their read buffers). An observer or a state that keeps a
// string or a slice aliasing a batch instead of copying it then sees garbage at once, every
// time, instead of on the rare runs where a real source happens to reuse that memory early.
// Replaying through Scribbling and through the plain source must give the same results.
package eventlogtest
