package wallclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestClockFixedByEnv(t *testing.T) {
	t.Setenv(Env, "2026-12-02T10:11:12.345Z")
	clock, err := Clock()
	require.NoError(t, err)
	want := time.Date(2026, 12, 2, 10, 11, 12, 345e6, time.UTC)
	require.True(t, clock().Equal(want), "got %s", clock())
	require.True(t, clock().Equal(clock()), "a fixed clock does not move")

	t.Setenv(Env, "1764670272345")
	clock, err = Clock()
	require.NoError(t, err)
	require.True(t, clock().Equal(time.UnixMilli(1764670272345)))
}

func TestClockUnsetIsTheWallClock(t *testing.T) {
	t.Setenv(Env, "")
	clock, err := Clock()
	require.NoError(t, err)
	before := time.Now()
	got := clock()
	require.False(t, got.Before(before), "the wall clock reads %s, before %s", got, before)
}

func TestClockRefusesGarbage(t *testing.T) {
	for _, v := range []string{"yesterday", "2026-12-02", "12:00:00Z", "-2h"} {
		t.Setenv(Env, v)
		_, err := Clock()
		require.ErrorContains(t, err, "COORDLOG_NOW=", v)
		require.ErrorContains(t, err, "RFC 3339", v)
	}
}
