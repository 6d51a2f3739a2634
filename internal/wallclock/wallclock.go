package wallclock

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Env is the variable that fixes the clock.
const Env = "COORDLOG_NOW"

// Clock returns the commands' clock: time.Now, or the instant COORDLOG_NOW names. It fails
// when COORDLOG_NOW is set to something that is not an RFC 3339 time or Unix milliseconds.
func Clock() (func() time.Time, error) {
	return fromValue(os.Getenv(Env))
}

func fromValue(v string) (func() time.Time, error) {
	if v == "" {
		return time.Now, nil
	}
	t, err := Parse(v)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", Env, v, err)
	}
	return func() time.Time { return t }, nil
}

// Parse reads an instant as COORDLOG_NOW gives it: RFC 3339 (2026-12-02T10:00:00Z, with or
// without fractional seconds) or Unix milliseconds.
func Parse(v string) (time.Time, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("not an RFC 3339 time (2026-12-02T10:00:00Z) or Unix milliseconds")
	}
	return t, nil
}
