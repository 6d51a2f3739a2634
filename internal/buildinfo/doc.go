// Package buildinfo says which build of coordlog a binary is, for the commands' --version:
// what the Go toolchain recorded in the binary (debug.ReadBuildInfo). It holds no state and
// reads nothing but the binary's own build information.
package buildinfo
