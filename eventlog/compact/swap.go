package compact

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// swapMarker is written next to the target before a swap starts and removed when it is over.
// It names the staged (verified) directory and the inode it had, so recovery can tell whether
// the target already is the new directory. Its paths are absolute, so that recovery works
// from any working directory; those of an older coordlog were relative to the working
// directory of the run that wrote it (see placeRelative).
type swapMarker struct {
	Target string `json:"target"`
	Staged string `json:"staged"`
	Backup string `json:"backup"`
	Dev    uint64 `json:"dev"`
	Ino    uint64 `json:"ino"`
	Keep   bool   `json:"keep_backup"`
}

const markerSuffix = ".compact-swap"

// MarkerPath is the swap marker of target.
func MarkerPath(target string) string { return filepath.Clean(target) + markerSuffix }

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
//  1. write the marker (target, staged, backup as absolute paths, staged's inode) durably;
//  2. exchange staged and target atomically (fallback: target -> backup, staged -> target);
//  3. move the old directory to backup;
//  4. remove backup (unless keepBackup), then the marker.
//
// Recover(target) completes an interrupted Replace from any of these points. staged and
// target must be on the same filesystem (checked before anything is written). The caller
// must hold target's lock: Replace does not exclude a second writer.
func Replace(target, staged string, keepBackup bool) error {
	_, err := replace(target, staged, keepBackup, nil)
	return err
}

// replace is Replace with prepare, which readies the staged directory to take the target's
// place: called before the marker is written (a failure there leaves nothing to recover), and
// again by a recovery that completes the swap (recoverSwap). committed says that the marker
// was written: from then on staged belongs to the swap, which Recover completes, and must
// not be removed whatever the error.
func replace(target, staged string, keepBackup bool, prepare func(staged string) error) (committed bool, err error) {
	if target, err = filepath.Abs(target); err != nil {
		return false, err
	}
	if staged, err = filepath.Abs(staged); err != nil {
		return false, err
	}
	if _, err := os.Stat(MarkerPath(target)); err == nil {
		return false, fmt.Errorf("%s: an earlier swap is unfinished (%s exists): run Recover first", target, MarkerPath(target))
	}
	if err := sameFileSystem(target, staged); err != nil {
		return false, err
	}
	dev, ino, err := inode(staged)
	if err != nil {
		return false, err
	}
	m := swapMarker{Target: target, Staged: staged, Backup: BackupPath(target), Dev: dev, Ino: ino, Keep: keepBackup}
	if _, err := os.Stat(m.Backup); err == nil {
		return false, fmt.Errorf("%s exists (a kept backup of an earlier compaction?): move it away first", m.Backup)
	}
	if prepare != nil {
		if err := prepare(staged); err != nil {
			return false, err
		}
	}
	if err := writeMarker(m); err != nil {
		return false, err
	}
	if err := step("marker"); err != nil {
		return true, err
	}
	return true, finish(m, nil)
}

// sameFileSystem checks that staged can be renamed to target's place: the swap's renames
// fail across file systems (target may be a link's destination elsewhere).
func sameFileSystem(target, staged string) error {
	tdev, _, err := inode(filepath.Dir(target))
	if err != nil {
		return err
	}
	sdev, _, err := inode(staged)
	if err != nil {
		return err
	}
	if tdev != sdev {
		return fmt.Errorf("%s and %s are on different file systems: the compacted log cannot be swapped in atomically (compact %s on its own, or use --out)", target, staged, target)
	}
	return nil
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
// idempotent. prepare (when set: a recovery) readies the staged directory again before it
// takes the target's place.
func finish(m swapMarker, prepare func(staged string) error) error {
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
		if prepare != nil {
			if err := prepare(m.Staged); err != nil {
				return err
			}
		}
		if _, err := os.Stat(m.Backup); terr == nil && err == nil {
			// The fallback had moved the old directory aside when it was interrupted, and a
			// directory was made at the target since (that of a database a writer was about
			// to create). Empty, it goes; else it is not this swap's to move.
			if err := os.Remove(m.Target); err != nil {
				return fmt.Errorf("swap of %s: the original was moved aside to %s, and %s was made since; move it away and run again: %w", m.Target, m.Backup, m.Target, err)
			}
			terr = fs.ErrNotExist
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
// complete. Without a marker there is nothing to do. The caller must hold target's lock.
func Recover(target string) (bool, error) {
	return recoverSwap(target, nil)
}

func recoverSwap(target string, prepare func(staged string) error) (bool, error) {
	target, err := filepath.Abs(target)
	if err != nil {
		return false, err
	}
	path := MarkerPath(target)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		os.Remove(path + ".tmp") // a marker that never became durable
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var m swapMarker
	if err := json.Unmarshal(b, &m); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if !filepath.IsAbs(m.Target) {
		if m, err = placeRelative(m, target, path); err != nil {
			return false, err
		}
	}
	return true, finish(m, prepare)
}

// placeRelative turns the relative paths of an older coordlog's marker into absolute ones.
// They were relative to the working directory of the run that wrote the marker, and the
// marker lies at MarkerPath(target): so that directory is what target ends in m.Target
// below. A path that climbs (..) cannot be placed that way: the marker is refused, saying
// what to do.
func placeRelative(m swapMarker, target, path string) (swapMarker, error) {
	rel := filepath.Clean(m.Target)
	sep := string(filepath.Separator)
	cwd, ok := strings.CutSuffix(target, sep+rel)
	if !ok || rel == ".." || strings.HasPrefix(rel, ".."+sep) {
		return m, fmt.Errorf("%s was written by an older coordlog, with paths relative to the directory it ran in (%q): run that coordlog's compact --in-place again from that directory to finish the swap", path, m.Target)
	}
	if cwd == "" {
		cwd = sep
	}
	place := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	m.Target, m.Staged, m.Backup = target, place(m.Staged), place(m.Backup)
	return m, nil
}

// renameChecked renames a to b unless b exists (fs.ErrExist), in two steps.
func renameChecked(a, b string) error {
	if _, err := os.Lstat(b); err == nil {
		return &os.LinkError{Op: "rename", Old: a, New: b, Err: fs.ErrExist}
	}
	return os.Rename(a, b)
}
