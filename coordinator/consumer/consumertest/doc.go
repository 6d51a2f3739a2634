// Package consumertest is the scenario language and Runner that drive the KIP-848 consumer
// group coordinator (coordinator/consumer), with consumer-protocol clients and classic-protocol
// clients that join consumer groups and take part in conversions: its datadriven tests
// (coordinator/consumer/testdata) and `replay simulate --protocol consumer`. The language is
// documented in scenario.go; every decision is appended to a coordinator.Log as one batch and
// the transcript shows requests ("> "), responses ("  < "), records ("  + ", dump-log JSON),
// fired timers and regex resolutions.
package consumertest
