package compact

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errCrash = errors.New("simulated crash")

// content returns "old" or "new" for the directory at path, "" when it is missing.
func content(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(path, "which"))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	require.NoError(t, err)
	return string(b)
}

func mkdir(t *testing.T, path, which string) {
	require.NoError(t, os.MkdirAll(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "which"), []byte(which), 0o644))
}

// TestSwapCrashAtEveryStep stops Replace after each of its steps (with the atomic exchange
// and with the two-rename fallback), checks that the target is then the old or the new
// directory (or, in the fallback's documented window, recoverable), and that Recover always
// ends with the new directory in place and nothing left behind.
func TestSwapCrashAtEveryStep(t *testing.T) {
	steps := []string{"marker", "aside", "swapped", "backup", "removed", ""}
	for _, fallback := range []bool{false, true} {
		for _, keep := range []bool{false, true} {
			for _, crashAt := range steps {
				name := crashAt
				if name == "" {
					name = "none"
				}
				t.Run(map[bool]string{false: "exchange", true: "fallback"}[fallback]+"/"+map[bool]string{false: "nobackup", true: "keep"}[keep]+"/"+name, func(t *testing.T) {
					dir := t.TempDir()
					target, staged := filepath.Join(dir, "log"), filepath.Join(dir, "log.compact-new")
					mkdir(t, target, "old")
					mkdir(t, staged, "new")
					useFallback = fallback
					crashHook = func(s string) error {
						if s == crashAt {
							return errCrash
						}
						return nil
					}
					defer func() { useFallback, crashHook = false, nil }()
					err := Replace(target, staged, keep)
					crashed := errors.Is(err, errCrash)
					if !crashed {
						require.NoError(t, err)
					}
					got := content(t, target)
					if fallback && crashAt == "aside" {
						// The window of the fallback: target is missing, both copies exist.
						assert.Equal(t, "", got)
						assert.Equal(t, "old", content(t, BackupPath(target)))
					} else {
						assert.Contains(t, []string{"old", "new"}, got, "target must be intact")
					}
					crashHook = nil
					did, err := Recover(target)
					require.NoError(t, err)
					assert.Equal(t, crashed, did)
					assert.Equal(t, "new", content(t, target))
					assert.NoFileExists(t, MarkerPath(target))
					assert.NoDirExists(t, staged)
					if keep {
						assert.Equal(t, "old", content(t, BackupPath(target)))
					} else {
						assert.NoDirExists(t, BackupPath(target))
					}
					// Recovering again is a no-op.
					did, err = Recover(target)
					require.NoError(t, err)
					assert.False(t, did)
				})
			}
		}
	}
}

// TestSwapMarkerNotDurable: a crash while the marker is being written leaves the target
// untouched and Recover does nothing (the job then discards the staged directory).
func TestSwapMarkerNotDurable(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "log")
	mkdir(t, target, "old")
	require.NoError(t, os.WriteFile(MarkerPath(target)+".tmp", []byte("{"), 0o644))
	did, err := Recover(target)
	require.NoError(t, err)
	assert.False(t, did)
	assert.Equal(t, "old", content(t, target))
	assert.NoFileExists(t, MarkerPath(target)+".tmp")
}

// TestSwapRefusesOverBackup: a kept backup of an earlier run is never overwritten.
func TestSwapRefusesOverBackup(t *testing.T) {
	dir := t.TempDir()
	target, staged := filepath.Join(dir, "log"), filepath.Join(dir, "new")
	mkdir(t, target, "old")
	mkdir(t, staged, "new")
	mkdir(t, BackupPath(target), "older")
	require.ErrorContains(t, Replace(target, staged, false), "exists")
	assert.Equal(t, "old", content(t, target))
}

// TestExchangeIsAtomicHere: on this platform the swap really uses RENAME_EXCHANGE (the
// fallback is only for filesystems or platforms without it).
func TestExchangeIsAtomicHere(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mkdir(t, a, "A")
	mkdir(t, b, "B")
	if err := exchange(a, b); err != nil {
		t.Skipf("no RENAME_EXCHANGE here (%v): Replace uses the two-rename fallback", err)
	}
	assert.Equal(t, "B", content(t, a))
	assert.Equal(t, "A", content(t, b))
}

// TestSwapRecoversOverEmptyTarget: the fallback was interrupted with the old directory moved
// aside, and an empty directory was made at the target since (a writer about to create a
// database there): recovery removes it and completes the swap. One that holds anything is
// left alone, and recovery fails.
func TestSwapRecoversOverEmptyTarget(t *testing.T) {
	for _, empty := range []bool{true, false} {
		dir := t.TempDir()
		target, staged := filepath.Join(dir, "log"), filepath.Join(dir, "log.compact-new-1")
		mkdir(t, target, "old")
		mkdir(t, staged, "new")
		useFallback = true
		crashHook = func(s string) error {
			if s == "aside" {
				return errCrash
			}
			return nil
		}
		_, err := replace(target, staged, false, nil)
		useFallback, crashHook = false, nil
		require.ErrorIs(t, err, errCrash)
		require.NoError(t, os.Mkdir(target, 0o755))
		if !empty {
			mkdir(t, target, "someone else's")
		}
		did, err := Recover(target)
		if !empty {
			require.ErrorContains(t, err, "move it away and run again")
			assert.Equal(t, "someone else's", content(t, target))
			assert.Equal(t, "old", content(t, BackupPath(target)))
			assert.Equal(t, "new", content(t, staged))
			continue
		}
		require.NoError(t, err)
		assert.True(t, did)
		assert.Equal(t, "new", content(t, target))
		assert.NoDirExists(t, BackupPath(target))
		assert.NoFileExists(t, MarkerPath(target))
	}
}
