// Package archtest holds the import-rule test that keeps coordlog's package graph the one of
// DESIGN.md: recordcodec and groupstate are leaves that never import each other, the storage
// and replay layers import only what sits below them, and only the CLIs import everything.
package archtest
