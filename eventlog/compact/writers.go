package compact

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/lock"
)

// jobRun is a job while it runs: its resolved paths and the locks it holds.
type jobRun struct {
	*Job
	input string // the input, resolved (links followed)
	final string // where the result goes, resolved: the input in place, else the output
	locks []*lock.Lock
	// db is the input database's lock: the staged database that replaces it in place gets a
	// link to it before the swap, so that the database stays locked across the swap.
	db *lock.Lock
}

func (j *Job) command() string {
	switch {
	case j.Command != "":
		return j.Command
	case j.InPlace:
		return "compact --in-place"
	}
	return "compact --out"
}

// start takes the job's locks, then completes what earlier runs left: an interrupted swap is
// finished (in place), staging directories of dead runs are removed. The caller releases the
// run whatever start returns.
//
// The locks: the input (a database's own lock, or the one beside a segment directory), each
// __consumer_offsets-N directory of a log directory, and the destination (beside the output,
// or beside the input in place). The destination's lock guards its staging directories
// (<destination>.compact-new-*): whoever holds it knows that no live run owns them.
func (j *Job) start() (*jobRun, error) {
	r := &jobRun{Job: j}
	var err error
	if r.input, err = lock.Resolve(j.Input); err != nil {
		return r, err
	}
	final := j.Output
	if j.InPlace {
		final = j.Input
	}
	if r.final, err = lock.Resolve(final); err != nil {
		return r, err
	}
	if !j.InPlace && r.final == r.input {
		return r, fmt.Errorf("--out %s is the input: give a new directory, or compact in place", j.Output)
	}
	take := func(l *lock.Lock, err error) error {
		if err == nil {
			r.locks = append(r.locks, l)
		}
		return err
	}
	cmd := j.command()
	lockDatabase := func() error {
		if r.db != nil || !input.IsDatabase(r.input) {
			return nil
		}
		l, err := lock.Database(j.Input, cmd)
		if err := take(l, err); err != nil {
			return err
		}
		r.db = l
		return nil
	}
	if err := lockDatabase(); err != nil {
		return r, err
	}
	if r.db == nil && !j.InPlace {
		if err := take(lock.Beside(j.Input, cmd)); err != nil {
			return r, err
		}
	}
	names, err := partitionDirs(r.input)
	if err != nil {
		return r, err
	}
	for _, name := range names {
		if err := take(lock.Beside(filepath.Join(j.Input, name), cmd)); err != nil {
			return r, err
		}
	}
	if err := take(lock.Beside(final, cmd)); err != nil {
		return r, err
	}
	if !j.InPlace {
		if err := interrupted(j.Input); err != nil {
			return r, err
		}
		return r, r.removeDeadStaging()
	}
	if done, err := r.recoverSwaps(); err != nil {
		return r, err
	} else if done {
		j.logf("finished an interrupted swap of %s", j.Input)
	}
	// A database that a crashed two-rename swap had moved aside exists again: lock it now
	// (a writer that came first, after the swap was complete, makes this run fail busy).
	if err := lockDatabase(); err != nil {
		return r, err
	}
	return r, r.removeDeadStaging()
}

func (r *jobRun) release() {
	for i := len(r.locks) - 1; i >= 0; i-- {
		r.locks[i].Release()
	}
	r.locks = nil
}

// beforeSwap readies a staged directory to take its target's place: a database gets a link
// to the held lock (see lock.LinkInto).
func (r *jobRun) beforeSwap(staged string) error {
	if r.db == nil {
		return nil
	}
	return r.db.LinkInto(staged)
}

// partitionDirs lists the __consumer_offsets-N directories (or links to them) in dir, and
// those an interrupted swap left without a directory (only their marker is there).
// A dir that is not there (a database a crashed fallback swap moved aside) has none.
func partitionDirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list the partitions of %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		name, marker := strings.CutSuffix(e.Name(), markerSuffix)
		if !offsetsDirRE.MatchString(name) {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, name))
		if marker && err != nil || !marker && err == nil && st.IsDir() {
			out = append(out, name)
		}
	}
	return out, nil
}

// recoverSwaps completes interrupted swaps of the input (the database or partition directory
// itself, or each partition directory of a log directory, where it really is).
func (r *jobRun) recoverSwaps() (bool, error) {
	targets := []string{r.input}
	// An input that is not there (a database a crashed fallback swap moved aside) holds
	// nothing to list: its own marker, beside it, names it.
	ents, err := os.ReadDir(r.input)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("look for interrupted swaps in %s: %w", r.input, err)
	}
	for _, e := range ents {
		if offsetsDirRE.MatchString(e.Name()) {
			t, err := lock.Resolve(filepath.Join(r.input, e.Name()))
			if err != nil {
				return false, err
			}
			targets = append(targets, t)
		}
		// A partition directory moved aside by the fallback swap has no entry left: its
		// marker names it. (Read from the listing, not globbed: the input's path may hold
		// characters a pattern would take for its own.)
		if name, ok := strings.CutSuffix(e.Name(), markerSuffix); ok {
			targets = append(targets, filepath.Join(r.input, name))
		}
	}
	sort.Strings(targets)
	any := false
	for i, t := range targets {
		if i > 0 && t == targets[i-1] {
			continue
		}
		done, err := recoverSwap(t, r.beforeSwap)
		if err != nil {
			return any, err
		}
		any = any || done
	}
	return any, nil
}

const stagingSuffix = ".compact-new"

// stagingDir returns a new staging directory name for the destination final (resolved):
// <final>.compact-new-<pid>-<random>, unique to this run.
func stagingDir(final string) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%s-%d-%s", final, stagingSuffix, os.Getpid(), hex.EncodeToString(b[:])), nil
}

// removeDeadStaging removes the staging directories of the destination left by runs that
// died before publishing (the caller holds the destination's lock, so no live run owns any;
// swaps that had begun were finished first). <final>.compact-new is an older coordlog's.
func (r *jobRun) removeDeadStaging() error {
	ents, err := os.ReadDir(filepath.Dir(r.final))
	if err != nil {
		return nil // the output's parent does not exist yet
	}
	prefix := filepath.Base(r.final) + stagingSuffix
	for _, e := range ents {
		if n := e.Name(); n == prefix || strings.HasPrefix(n, prefix+"-") {
			dead := filepath.Join(filepath.Dir(r.final), n)
			if err := os.RemoveAll(dead); err != nil {
				return fmt.Errorf("remove %s, left by an interrupted run: %w", dead, err)
			}
			r.logf("removed %s, left by an interrupted run", dead)
		}
	}
	return nil
}

// Pending returns an error when an in-place compaction of path (a database, a partition
// directory, or a partition directory of the log directory path) is not finished: its swap
// marker remains. Until it is, path may be missing or about to be replaced, so other writers
// must leave it alone. A compaction still running (it holds the lock beside path) is a
// *lock.BusyError naming it; one that was interrupted says to run `compact --in-place` to
// finish it.
func Pending(path string) error {
	err := interrupted(path)
	if err == nil {
		return nil
	}
	if h, herr := lock.HolderBeside(path); herr == nil && h != nil {
		return &lock.BusyError{Name: path, Holder: h}
	}
	return err
}

// interrupted is Pending for a caller that holds path's locks itself: a marker is an
// interrupted compaction's.
func interrupted(path string) error {
	real, err := lock.Resolve(path)
	if err != nil {
		return err
	}
	marks, err := markersIn(real)
	if err != nil {
		return err
	}
	if _, err := os.Stat(MarkerPath(real)); err == nil {
		marks = append([]string{MarkerPath(real)}, marks...)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(marks) == 0 {
		return nil
	}
	return fmt.Errorf("%s: an in-place compaction was interrupted (%s remains): run `compact %s --in-place` to finish it first", path, marks[0], path)
}

// markersIn lists the swap markers inside dir (none when dir is not there or not a
// directory). They are read from its listing, not globbed: a path may hold characters that a
// pattern takes for its own.
func markersIn(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("look for interrupted compactions in %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), markerSuffix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}
