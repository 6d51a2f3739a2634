package compact

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// swapMarker is written next to the target before a swap starts and removed when it is over.
// It names the staged (verified) directory and the inode it had, so recovery can tell whether
// the target already is the new directory.
type swapMarker struct {
	Target string `json:"target"`
	Staged string `json:"staged"`
	Backup string `json:"backup"`
	Dev    uint64 `json:"dev"`
	Ino    uint64 `json:"ino"`
	Keep   bool   `json:"keep_backup"`
}

// MarkerPath is the swap marker of target.
func MarkerPath(target string) string { return filepath.Clean(target) + ".compact-swap" }

// BackupPath is where the replaced directory goes during a swap (and stays with keepBackup).
func BackupPath(target string) string { return filepath.Clean(target) + ".compact-old" }

// useFallback forces the two-rename swap (tests of the fallback path).
var useFallback bool

// crashHook lets crash tests stop Replace between any two steps; nil in production.
var crashHook func(step string) error

func step(name string) error {
	if crashHook != nil {
		return crashHook(name)
	}
	return nil
}

func inode(path string) (dev, ino uint64, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("%s: no inode information on this platform", path)
	}
	return uint64(sys.Dev), sys.Ino, nil
}

// Replace makes the complete, synced directory staged take the place of directory target so
// that a crash at any instant leaves target holding either the old or the new directory (with
// RENAME_EXCHANGE; where the filesystem lacks it, a two-rename fallback leaves a window in
// which target is missing and Recover restores it). Steps:
//
//  1. write the marker (target, staged, backup, staged's inode) durably;
//  2. exchange staged and target atomically (fallback: target -> backup, staged -> target);
//  3. move the old directory to backup;
//  4. remove backup (unless keepBackup), then the marker.
//
// Recover(target) completes an interrupted Replace from any of these points. staged and
// target must be on the same filesystem.
func Replace(target, staged string, keepBackup bool) error {
	target, staged = filepath.Clean(target), filepath.Clean(staged)
	if _, err := os.Stat(MarkerPath(target)); err == nil {
		return fmt.Errorf("%s: an earlier swap is unfinished (%s exists): run Recover first", target, MarkerPath(target))
	}
	dev, ino, err := inode(staged)
	if err != nil {
		return err
	}
	m := swapMarker{Target: target, Staged: staged, Backup: BackupPath(target), Dev: dev, Ino: ino, Keep: keepBackup}
	if _, err := os.Stat(m.Backup); err == nil {
		return fmt.Errorf("%s exists (a kept backup of an earlier compaction?): move it away first", m.Backup)
	}
	if err := writeMarker(m); err != nil {
		return err
	}
	if err := step("marker"); err != nil {
		return err
	}
	return finish(m)
}

func writeMarker(m swapMarker) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	path := MarkerPath(m.Target)
	if err := writeFileSync(path+".tmp", b); err != nil {
		return err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func writeFileSync(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// finish runs the swap from wherever it stands; every step checks the state first, so it is
// idempotent.
func finish(m swapMarker) error {
	parent := filepath.Dir(m.Target)
	isNew := func() bool {
		dev, ino, err := inode(m.Target)
		return err == nil && dev == m.Dev && ino == m.Ino
	}
	if !isNew() {
		_, terr := os.Stat(m.Target)
		if _, err := os.Stat(m.Staged); err != nil {
			return fmt.Errorf("swap of %s: neither it nor %s is the new directory: %w", m.Target, m.Staged, err)
		}
		switch {
		case terr == nil:
			var err error = syscall.ENOSYS
			if !useFallback {
				err = exchange(m.Staged, m.Target)
			}
			if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
				// No atomic exchange here: move the old one aside first.
				if err := os.Rename(m.Target, m.Backup); err != nil {
					return err
				}
				if err := step("aside"); err != nil {
					return err
				}
				err = os.Rename(m.Staged, m.Target)
			}
			if err != nil {
				return fmt.Errorf("swap %s and %s: %w", m.Staged, m.Target, err)
			}
		case errors.Is(terr, fs.ErrNotExist):
			// The fallback was interrupted after moving the old directory aside.
			if err := os.Rename(m.Staged, m.Target); err != nil {
				return err
			}
		default:
			return terr
		}
		if err := syncDir(parent); err != nil {
			return err
		}
	}
	if err := step("swapped"); err != nil {
		return err
	}
	// After an exchange the old directory sits at the staged path.
	if _, err := os.Stat(m.Staged); err == nil {
		if err := os.Rename(m.Staged, m.Backup); err != nil {
			return err
		}
		if err := syncDir(parent); err != nil {
			return err
		}
	}
	if err := step("backup"); err != nil {
		return err
	}
	if !m.Keep {
		if err := os.RemoveAll(m.Backup); err != nil {
			return err
		}
		if err := step("removed"); err != nil {
			return err
		}
	}
	if err := os.Remove(MarkerPath(m.Target)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(parent)
}

// Recover completes an interrupted Replace of target (the staged directory was verified before
// the marker was written, so rolling forward is safe) and reports whether there was one to
// complete. Without a marker there is nothing to do.
func Recover(target string) (bool, error) {
	b, err := os.ReadFile(MarkerPath(target))
	if errors.Is(err, fs.ErrNotExist) {
		os.Remove(MarkerPath(target) + ".tmp") // a marker that never became durable
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var m swapMarker
	if err := json.Unmarshal(b, &m); err != nil {
		return false, fmt.Errorf("%s: %w", MarkerPath(target), err)
	}
	return true, finish(m)
}
