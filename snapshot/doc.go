// Package snapshot frames and stores snapshots of replayed state: msgpack-encoded,
// checksummed, written atomically, restored newest-valid-first.
package snapshot
