package lock

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecondWriterIsRefused: a second lock of one directory fails with the first holder's
// command, pid, host and time, and the lock is free again after Release.
func TestSecondWriterIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	require.NoError(t, os.Mkdir(dir, 0o755))
	l, err := Beside(dir, "compact --in-place")
	require.NoError(t, err)
	assert.Equal(t, dir+Suffix, l.Path())

	_, err = Beside(dir, "replay simulate")
	var busy *BusyError
	require.ErrorAs(t, err, &busy)
	host, _ := os.Hostname()
	assert.Equal(t, "compact --in-place", busy.Holder.Command)
	assert.Equal(t, os.Getpid(), busy.Holder.PID)
	assert.Equal(t, host, busy.Holder.Host)
	// (with the date when the test runs across midnight UTC: a lock taken on another day)
	assert.Regexp(t, regexp.QuoteMeta(dir)+` is in use by "compact --in-place" \(pid \d+ on host .+, since (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\dZ\): wait for it to finish or stop it$`, err.Error())

	h, err := HolderOf(dir)
	require.NoError(t, err)
	require.NotNil(t, h)
	assert.Equal(t, "compact --in-place", h.Command)

	require.NoError(t, l.Release())
	assert.NoFileExists(t, dir+Suffix, "the lock file goes with the lock")
	h, err = HolderOf(dir)
	require.NoError(t, err)
	assert.Nil(t, h)
	l, err = Beside(dir, "replay simulate")
	require.NoError(t, err)
	require.NoError(t, l.Release())
	require.NoError(t, l.Release(), "a second Release does nothing")
}

// TestHolderSinceAnotherDay: a lock taken on another day says the date too.
func TestHolderSinceAnotherDay(t *testing.T) {
	h := &Holder{Command: "replay import", PID: 7, Host: "h", Since: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)}
	assert.Equal(t, `"replay import" (pid 7 on host h, since 2020-01-02 03:04:05Z)`, h.String())
	assert.Equal(t, "another process (it has not said which yet)", (*Holder)(nil).String())
}

// TestLinksShareALock: a symbolic link and the directory it names are one lock.
func TestLinksShareALock(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "data", "__consumer_offsets-0")
	require.NoError(t, os.MkdirAll(real, 0o755))
	link := filepath.Join(root, "__consumer_offsets-0")
	require.NoError(t, os.Symlink(real, link))
	l, err := Beside(link, "compact --in-place")
	require.NoError(t, err)
	defer l.Release()
	assert.Equal(t, real+Suffix, l.Path(), "the lock file is beside the directory, not the link")
	_, err = Beside(real, "compact --in-place")
	var busy *BusyError
	require.ErrorAs(t, err, &busy)
	assert.Equal(t, real, busy.Name)

	// A path that does not exist yet under a linked parent locks beside its real place.
	require.NoError(t, os.Symlink(filepath.Join(root, "data"), filepath.Join(root, "lnk")))
	out, err := Beside(filepath.Join(root, "lnk", "out"), "compact --out")
	require.NoError(t, err)
	defer out.Release()
	assert.Equal(t, filepath.Join(root, "data", "out")+Suffix, out.Path())
}

// TestDatabaseLockSurvivesSwap: a database's lock file is inside it; linked into a staged
// database that then takes its place, the lock still holds, and Release removes it there.
func TestDatabaseLockSurvivesSwap(t *testing.T) {
	root := t.TempDir()
	db, staged := filepath.Join(root, "db"), filepath.Join(root, "db.compact-new-1")
	l, err := Database(db, "compact --in-place")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(db, FileName), l.Path())
	require.NoError(t, os.Mkdir(staged, 0o755))
	require.NoError(t, l.LinkInto(staged))
	// The swap, as two renames.
	require.NoError(t, os.Rename(db, db+".compact-old"))
	require.NoError(t, os.Rename(staged, db))

	_, err = Database(db, "replay import")
	var busy *BusyError
	require.ErrorAs(t, err, &busy, "the swapped-in database is still locked")
	assert.Equal(t, "compact --in-place", busy.Holder.Command)

	require.NoError(t, l.Release())
	assert.NoFileExists(t, filepath.Join(db, FileName))
	l, err = Database(db, "replay import")
	require.NoError(t, err)
	require.NoError(t, l.Release())
}

// TestDatabaseIsCreated: a writer about to create a database locks it first.
func TestDatabaseIsCreated(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a", "db")
	l, err := Database(db, "replay import")
	require.NoError(t, err)
	assert.DirExists(t, db)
	require.NoError(t, l.Release())
}

// TestStaleLockIsTakenOver: a process holding the lock is killed (SIGKILL: no chance to clean
// up); its lock file stays, the kernel dropped its flock, and the next writer takes it over.
// While it lived, the refusal named it.
func TestStaleLockIsTakenOver(t *testing.T) {
	if os.Getenv("LOCK_HELPER_DIR") != "" {
		t.Skip("helper process")
	}
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	require.NoError(t, os.Mkdir(dir, 0o755))
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldsLock$")
	cmd.Env = append(os.Environ(), "LOCK_HELPER_DIR="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the helper never said it holds the lock")
	require.Equal(t, "locked\n", line)

	_, err = Beside(dir, "compact --in-place")
	var busy *BusyError
	require.ErrorAs(t, err, &busy)
	assert.Equal(t, cmd.Process.Pid, busy.Holder.PID)
	assert.Equal(t, "replay simulate --segments", busy.Holder.Command)

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.FileExists(t, dir+Suffix, "a killed holder leaves its lock file")
	h, err := HolderOf(dir)
	require.NoError(t, err)
	assert.Nil(t, h, "a lock file nobody holds has no holder")

	l, err := Beside(dir, "compact --in-place")
	require.NoError(t, err)
	defer l.Release()
	b, err := os.ReadFile(l.Path())
	require.NoError(t, err)
	var got Holder
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, os.Getpid(), got.PID, "the new holder's line replaced the dead one's")
}

// TestHelperHoldsLock is the process TestStaleLockIsTakenOver kills.
func TestHelperHoldsLock(t *testing.T) {
	dir := os.Getenv("LOCK_HELPER_DIR")
	if dir == "" {
		t.Skip("run by TestStaleLockIsTakenOver")
	}
	if _, err := Beside(dir, "replay simulate --segments"); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Hour)
}

// TestHolderOfWhileBusyProbe: a writer whose lock file a reader is probing at that very
// instant (HolderOf's shared flock) still gets the lock: a busy lock is tried again.
func TestHolderOfWhileBusyProbe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	f, err := os.Create(dir + Suffix)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_SH))
	tries := 0
	onBusy = func() {
		if tries++; tries == 2 {
			f.Close() // the probe ends
		}
	}
	defer func() { onBusy = nil }()
	l, err := Beside(dir, "compact --out")
	require.NoError(t, err)
	assert.Equal(t, 2, tries)
	require.NoError(t, l.Release())
}

// TestUnknownHolder: a lock held by a process that has not written its line yet.
func TestUnknownHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	f, err := os.Create(dir + Suffix)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	_, err = Beside(dir, "compact --out")
	var busy *BusyError
	require.True(t, errors.As(err, &busy))
	assert.Nil(t, busy.Holder)
	assert.Contains(t, err.Error(), "is in use by another process (it has not said which yet)")
}
