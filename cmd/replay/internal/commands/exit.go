package commands

import (
	"errors"
	"fmt"

	"github.com/coordlog/coordlog/cluster"
	"github.com/coordlog/coordlog/replay/session"
)

// Exit codes, the same for every command (and for compact): 0 ok, 1 findings or failure, 2 a
// bad command line.
const (
	ExitOK       = 0
	ExitFailure  = 1 // the input is bad (strict mode) or the job failed
	ExitUsage    = 2 // the command line is wrong: unknown command or flag, bad value, missing input
	ExitFindings = 1 // check found problems, diff --exit-code found changes, a snapshot is bad
)

// usageError marks errors in the command line.
type usageError struct{ error }

// exitCodeError carries a specific exit code (e.g. check's "found something").
type exitCodeError struct {
	code int
	msg  string
}

func (e exitCodeError) Error() string { return e.msg }

// exitCode maps an error to the exit code convention.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	var ec exitCodeError
	if errors.As(err, &ec) {
		return ec.code
	}
	return ExitFailure
}

// liveFlagNames are the flags that give each setting of cluster.Config.
var liveFlagNames = map[cluster.Setting]string{
	cluster.SettingBootstrap: "--bootstrap-server", cluster.SettingTLSCA: "--tls-ca", cluster.SettingTLSCert: "--tls-cert",
	cluster.SettingTLSKey: "--tls-key", cluster.SettingSASLMechanism: "--sasl-mechanism", cluster.SettingSASLUser: "--sasl-user",
}

// commandLine says a library's error as the command line caused it: a request the session
// cannot carry out as asked, or connection settings that cannot work, are usage errors (the
// latter naming the flags); a replay that stopped says how to carry on past what stopped it.
func commandLine(err error) error {
	var ce *cluster.ConfigError
	var re *session.RequestError
	var stopped *session.ReplayError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return usageError{errors.New(ce.Render(func(s cluster.Setting) string { return liveFlagNames[s] }))}
	case errors.As(err, &re):
		return usageError{err}
	case errors.As(err, &stopped):
		return fmt.Errorf("%w (use --forensic to record it and continue)", err)
	}
	return err
}
