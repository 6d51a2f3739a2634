// Package archtest holds the import-rule test that keeps coordlog's package graph the one of
// ARCHITECTURE.md: recordcodec and groupstate are leaves that never import each other, the
// storage and replay layers import only what sits below them, the engine knows neither
// snapshots nor coordinators, the coordinators never import the engine, the session (the
// library under the commands) reaches snapshots and live clusters while the queries do not,
// and only the commands import everything (and never one another: a command's own
// sub-packages, such as cmd/replay/internal/commands, are its).
package archtest
