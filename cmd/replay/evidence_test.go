package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/internal/wallclock"
	"github.com/coordlog/coordlog/replay/session"

	"github.com/coordlog/coordlog/eventlog/pebblelog"
)

// Tests of what a database and its snapshots go through on an incident: read-only media,
// users who cannot write, readers beside a writer, a full disk, copied snapshots, a second
// dump imported on top of the first, a --db that is not a database. The commands run as the
// user runs them, mostly in a child process (cliEnv) so that a panic, an exit status and
// another user id are what the user would see.

// cliEnv makes the test binary run the CLI with these arguments (a JSON array) and exit.
const cliEnv = "COORDLOG_TEST_CLI"

// holdEnv makes the test binary hold a database open for writing, as an import does (see
// TestMain).
const holdEnv = "COORDLOG_TEST_HOLD_DB"

func TestMain(m *testing.M) {
	if env := os.Getenv(cliEnv); env != "" {
		var args []string
		if err := json.Unmarshal([]byte(env), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(99)
		}
		// As main does.
		if err := configureClock(); err != nil {
			fmt.Fprintf(os.Stderr, "replay: %v\n", err)
			os.Exit(exitUsage)
		}
		os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
	}
	if dir := os.Getenv(holdEnv); dir != "" {
		os.Exit(holdWriter(dir))
	}
	// The tests fix the width themselves (t.Setenv("COLUMNS", ...)) where they need one; what
	// the shell running them exports must not change an expected output.
	os.Unsetenv("COLUMNS")
	os.Unsetenv(wallclock.Env)
	os.Exit(m.Run())
}

// holdWriter takes dir's writer lock and opens it for writing, as import does, says "ready"
// and holds the database until stdin closes.
func holdWriter(dir string) int {
	held, err := session.LockDatabase(dir, "replay import")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	l, err := pebblelog.Open(dir, nil)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	l.Close()
	held.Release()
	return 0
}

// cliResult is what a run of the CLI printed and its exit status.
type cliResult struct {
	out, err string
	code     int
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.err)
}

// cliAs runs the CLI in a child process, as the user cred (nil: this one), from binary (the
// test binary, or a copy another user can run).
func cliAs(t *testing.T, binary string, cred *syscall.Credential, args ...string) cliResult {
	t.Helper()
	// A command that hangs (one waiting for a flush that cannot come, say) fails the test
	// instead of blocking it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary)
	env, err := json.Marshal(args)
	require.NoError(t, err)
	// Wide lines, so that the messages checked here are not folded at 80 columns.
	cmd.Env = append(os.Environ(), cliEnv+"="+string(env), "COLUMNS=1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v did not finish (hung?): stdout:\n%s\nstderr:\n%s", args, out.String(), errb.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run %v: %v", args, err)
	}
	return cliResult{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// cli runs the CLI in a child process as this user.
func cli(t *testing.T, args ...string) cliResult {
	t.Helper()
	return cliAs(t, os.Args[0], nil, args...)
}

// requireNoPanic fails when the output shows a Go panic or goroutine dump.
func requireNoPanic(t *testing.T, r cliResult) {
	t.Helper()
	require.NotContains(t, r.err, "panic", r.String())
	require.NotContains(t, r.err, "goroutine ", r.String())
}

// recording is one of the committed Kafka 4.4 recordings.
func recording(t *testing.T, name string) string {
	dir := filepath.Join(committedRecordings, name, "__consumer_offsets-0")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("recording %s not present: %v", name, err)
	}
	return dir
}

// newDB imports the recording into a new database in dir and snapshots it twice.
func newDB(t *testing.T, dir, name string) {
	t.Helper()
	r := cli(t, "import", recording(t, name), "--db", dir, "--progress", "none")
	require.Zero(t, r.code, r.String())
	r = cli(t, "snapshot", "create", "--db", dir, "--every-records", "15", "--no-timestamp")
	require.Zero(t, r.code, r.String())
}

// dirListing describes every file under dir (name, size, mode, modification time).
func dirListing(t *testing.T, dir string) string { return listDir(t, dir, true) }

// fileListing is dirListing without the directories' modification times: a writer that was
// refused took and released its lock file (coordlog.lock), which touches the directory.
func fileListing(t *testing.T, dir string) string { return listDir(t, dir, false) }

func listDir(t *testing.T, dir string, dirTimes bool) string {
	t.Helper()
	var lines []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		mtime := st.ModTime().UnixNano()
		if d.IsDir() && !dirTimes {
			mtime = 0
		}
		lines = append(lines, fmt.Sprintf("%s %d %v %d", rel, st.Size(), st.Mode(), mtime))
		return nil
	}))
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// readCommands are the commands that only read a database, each with what its output shows
// when it read the recording "classic".
func readCommands(db string) [][]string {
	return [][]string{
		{"decode", db},
		{"describe", db},
		{"describe", db, "--from-snapshot"},
		{"offsets", db},
		{"offsets", db, "--from-snapshot"},
		{"groups", db},
		{"diff", db, "--to-offset", "20"},
		{"check", db},
		{"timeline", db, "--group", "classic-coop"},
		{"snapshot", "list", "--db", db},
		{"snapshot", "verify", "--db", db},
		{"restart", "--db", db},
	}
}

// TestReadersWriteNothing: every command that only reads a database leaves its directory as
// it was: no new MANIFEST, OPTIONS or WAL, no LOCK taken, nothing moved (names, sizes, modes
// and modification times compared). Before read-only opening, every read wrote a new
// MANIFEST, OPTIONS and WAL.
func TestReadersWriteNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	newDB(t, db, "classic")
	before := dirListing(t, db)
	for _, args := range readCommands(db) {
		r := cli(t, args...)
		require.Zero(t, r.code, "%v: %s", args, r)
		require.Equal(t, before, dirListing(t, db), "%v changed the database directory", args)
	}
}

// TestReadersBesideAWriter: while another process writes a database (an import, an import
// --follow), readers run beside it and beside each other; a second writer is refused with a
// message naming the first (command and pid), never "resource temporarily unavailable".
// Before, every reader took the exclusive lock and failed with that message.
func TestReadersBesideAWriter(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	newDB(t, db, "classic")
	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), holdEnv+"="+db)
	stdin, err := holder.StdinPipe()
	require.NoError(t, err)
	stdout, err := holder.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start())
	t.Cleanup(func() { stdin.Close(); _ = holder.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)

	var wg sync.WaitGroup
	results := make([]cliResult, 4)
	for i := range results {
		wg.Go(func() { results[i] = cli(t, "describe", db) })
	}
	wg.Wait()
	for _, r := range results {
		require.Zero(t, r.code, r.String())
		require.Contains(t, r.out, "GROUP classic-coop")
	}
	r := cli(t, "restart", "--db", db)
	require.Zero(t, r.code, r.String())

	r = cli(t, "import", recording(t, "classic"), "--db", db, "--progress", "none")
	require.Equal(t, exitFailure, r.code, r.String())
	require.Contains(t, r.err, fmt.Sprintf(`is in use by "replay import" (pid %d on host `, holder.Process.Pid))
	require.NotContains(t, r.err, "temporarily unavailable")
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	}))
}

// worldDir makes a directory every user can enter, removed with the test (t.TempDir's are
// its owner's only).
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "coordlog-evidence-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(path, 0o755)
			}
			return nil
		})
		_ = os.RemoveAll(dir)
	})
	return dir
}

// TestReadOnlyAsAnotherUser: a user who cannot write a database (another owner's, copied off
// a machine) reads it with every read-only command. Before, each failed with "open LOCK:
// permission denied". Needs root, to run the commands as nobody (CI runs as root).
func TestReadOnlyAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running the commands as another user needs root (CI runs as root)")
	}
	base := worldDir(t)
	db := filepath.Join(base, "db")
	newDB(t, db, "classic")
	// The test binary, where nobody can run it.
	self, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	binary := filepath.Join(base, "replay.test")
	require.NoError(t, os.WriteFile(binary, self, 0o755))
	require.NoError(t, filepath.WalkDir(db, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(path, 0o555)
		}
		return os.Chmod(path, 0o444)
	}))
	before := dirListing(t, db)
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	for _, args := range readCommands(db) {
		r := cliAs(t, binary, nobody, args...)
		require.Zero(t, r.code, "%v as nobody: %s", args, r)
	}
	require.Equal(t, before, dirListing(t, db))
}

// TestReadOnlyMedia: a database on a read-only filesystem (here a read-only bind mount) reads
// with every read-only command. Before, each failed with "read-only file system". Needs root
// to mount.
func TestReadOnlyMedia(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a read-only bind mount needs root (CI runs as root)")
	}
	src := filepath.Join(t.TempDir(), "db")
	newDB(t, src, "classic")
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "--bind", src, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v: %s", err, out)
	}
	require.ErrorIs(t, os.WriteFile(filepath.Join(mnt, "probe"), nil, 0o644), syscall.EROFS)
	for _, args := range readCommands(mnt) {
		r := cli(t, args...)
		require.Zero(t, r.code, "%v on read-only media: %s", args, r)
	}
}

// mountTmpfs mounts a small tmpfs, or skips the test when it cannot.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillUp writes to path until its filesystem is full.
func fillUp(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	for err == nil {
		_, err = f.Write(make([]byte, 64<<10))
	}
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, f.Close())
}

// TestFullDisk: on a full filesystem a read works, and snapshot create and import stop with a
// message that names the directory and says what to do, without a panic; once space is freed
// snapshot create succeeds. Before, describe and snapshot create panicked with "MANIFEST flush
// failed: no space left on device" and a goroutine dump.
func TestFullDisk(t *testing.T) {
	fsDir := mountTmpfs(t, "2m")
	db := filepath.Join(fsDir, "db")
	built := filepath.Join(t.TempDir(), "db")
	r := cli(t, "import", recording(t, "classic"), "--db", built, "--progress", "none")
	require.Zero(t, r.code, r.String())
	copyTree(t, built, db)
	fillUp(t, filepath.Join(fsDir, "filler"))

	r = cli(t, "describe", db)
	requireNoPanic(t, r)
	require.Zero(t, r.code, "a read needs no space: %s", r)
	require.Contains(t, r.out, "GROUP classic-coop")

	r = cli(t, "snapshot", "create", "--db", db)
	requireNoPanic(t, r)
	require.Equal(t, exitFailure, r.code, r.String())
	require.Contains(t, r.err, "no space left on device: free space on the filesystem of "+filepath.Join(db, "snapshots")+", then run the same command again", r.String())
	matches, _ := filepath.Glob(filepath.Join(db, "snapshots", "*.tmp"))
	require.Empty(t, matches, "no partial snapshot left")

	for _, to := range []string{db, filepath.Join(fsDir, "db2")} {
		r = cli(t, "import", recording(t, "consumer"), "--db", to, "--progress", "none")
		requireNoPanic(t, r)
		require.Equal(t, exitFailure, r.code, r.String())
		require.Contains(t, r.err, "no space left on "+to, r.String())
		require.Contains(t, r.err, "free space, then run the same command again", r.String())
	}

	require.NoError(t, os.Remove(filepath.Join(fsDir, "filler")))
	r = cli(t, "snapshot", "create", "--db", db)
	require.Zero(t, r.code, r.String())
}

// TestForeignSnapshot: a snapshot copied from another database (another log) is skipped by
// describe --from-snapshot and restart with a message naming the batch and both CRCs, the
// output is that of this log, snapshot verify reports it as bad and snapshot create does not
// start from it. Before, its state was restored silently (groups of the other log shown),
// verify said ok and snapshot create wrote a new wrong snapshot from it.
func TestForeignSnapshot(t *testing.T) {
	root := t.TempDir()
	here, there := filepath.Join(root, "here"), filepath.Join(root, "there")
	r := cli(t, "import", recording(t, "consumer"), "--db", here, "--progress", "none")
	require.Zero(t, r.code, r.String())
	newDB(t, there, "classic") // a shorter log: its snapshots are not ahead of this one
	want := cli(t, "describe", here, "--format", "json")
	require.Zero(t, want.code, want.String())

	snaps, err := filepath.Glob(filepath.Join(there, "snapshots", "snap-*.snap"))
	require.NoError(t, err)
	require.NotEmpty(t, snaps)
	copyTree(t, filepath.Join(there, "snapshots"), filepath.Join(here, "snapshots"))
	newest := filepath.Base(snaps[len(snaps)-1])

	r = cli(t, "describe", here, "--format", "json", "--from-snapshot")
	require.Zero(t, r.code, r.String())
	require.Equal(t, want.out, r.out, "the state of this log, not the copied snapshot's")
	require.NotContains(t, r.out, "classic-coop")
	require.Contains(t, r.err, "snapshot "+newest+" skipped (taken from another log: first batch: offsets 0..4 crc 0x")
	require.Contains(t, r.err, " here, offsets 0..0 crc 0x")
	require.Contains(t, r.err, "no usable snapshot, full replay")

	r = cli(t, "restart", "--db", here, "--compare-full")
	require.Zero(t, r.code, r.String())
	require.Contains(t, r.out, "taken from another log")
	require.Contains(t, r.out, "no usable snapshot: full replay")

	r = cli(t, "snapshot", "verify", "--db", here)
	require.Equal(t, exitFindings, r.code, r.String())
	require.Contains(t, r.out, "BAD  "+newest+": snapshot "+newest+": taken from another log")

	r = cli(t, "snapshot", "create", "--db", here, "--no-timestamp")
	require.Zero(t, r.code, r.String())
	require.Contains(t, r.out, "state from a full replay")
	offsets := cli(t, "offsets", here, "--format", "json")
	require.Zero(t, offsets.code, offsets.String())
	r = cli(t, "offsets", here, "--format", "json", "--from-snapshot")
	require.Zero(t, r.code, r.String())
	require.Equal(t, offsets.out, r.out)
	require.Contains(t, r.err, "from snapshot snap-", "the new snapshot, of this log, is used")
}

// TestImportAnotherDump: importing a second, different dump into a database refuses it (exit
// 1) naming the first offset that differs and both records, and writes nothing; re-importing
// the same dump checks it and adds nothing. Before, the other dump's first offsets were
// skipped unchecked and the rest merged in, exit 0.
func TestImportAnotherDump(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	r := cli(t, "import", recording(t, "classic"), "--db", db, "--progress", "none")
	require.Zero(t, r.code, r.String())
	before := fileListing(t, db)
	r = cli(t, "import", recording(t, "consumer"), "--db", db, "--progress", "none")
	require.Equal(t, exitFailure, r.code, r.String())
	require.Contains(t, r.err, "import refused: partition 0: the input is another log than the database holds: offset 0 holds key")
	require.Contains(t, r.err, "in the database (batch 0..0, crc 0x")
	require.Contains(t, r.err, "nothing imported")
	require.Equal(t, before, fileListing(t, db), "nothing written")

	r = cli(t, "import", recording(t, "classic"), "--db", db, "--progress", "none")
	require.Zero(t, r.code, r.String())
	require.Contains(t, r.out, "checked 22 batches of the input against the database, which held them already: the same log")
	require.Contains(t, r.out, "imported 0 batches")
}

// TestImportDBMustBeADatabase: --db naming the input directory, a directory inside it, or a
// non-empty directory that is not a database is refused (exit 2) and nothing is written.
// Before, import DIR --db DIR wrote Pebble's files into the Kafka partition directory.
func TestImportDBMustBeADatabase(t *testing.T) {
	part := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	copyTree(t, recording(t, "classic"), part)
	before := dirListing(t, part)
	for _, c := range []struct{ db, want string }{
		{part, "--db " + part + " is the input itself"},
		{filepath.Join(part, "db"), "is inside the input"},
		{filepath.Join(committedRecordings, "classic"), "is not a coordlog database and not empty"},
	} {
		r := cli(t, "import", part, "--db", c.db, "--progress", "none")
		require.Equal(t, exitUsage, r.code, r.String())
		require.Contains(t, r.err, c.want)
	}
	require.Equal(t, before, dirListing(t, part), "the partition directory is untouched")
}

// TestUnreadableSnapshotsDirectory: a snapshots directory that cannot be read (here a file in
// its place) is a warning and a full replay for describe --from-snapshot and restart. Before,
// it was a hard error.
func TestUnreadableSnapshotsDirectory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	r := cli(t, "import", recording(t, "classic"), "--db", db, "--progress", "none")
	require.Zero(t, r.code, r.String())
	require.NoError(t, os.WriteFile(filepath.Join(db, "snapshots"), []byte("not a directory"), 0o644))
	want := cli(t, "describe", db)
	require.Zero(t, want.code, want.String())

	r = cli(t, "describe", db, "--from-snapshot")
	require.Zero(t, r.code, r.String())
	require.Equal(t, want.out, r.out)
	require.Contains(t, r.err, "warning: snapshot: cannot read the snapshot directory "+filepath.Join(db, "snapshots"))
	require.Contains(t, r.err, "replaying from the start of the log")

	r = cli(t, "restart", "--db", db)
	require.Zero(t, r.code, r.String())
	require.Contains(t, r.out, "warning: snapshot: cannot read the snapshot directory")
	require.Contains(t, r.out, "no usable snapshot: full replay")
}
