package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/recovery"
	"github.com/coordlog/coordlog/snapshot"
)

// snapshotDir is where a database keeps its snapshots (recovery.StoreDir).
func snapshotDir(db string) string { return recovery.StoreDir(db) }

// openDB opens the coordlog database at db (which must exist) read-only, and its snapshot
// store: for writing snapshots (with retention) when so is set, else read-only.
func openDB(db string, so *snapshot.Options) (*pebblelog.Log, *snapshot.Store, error) {
	if db == "" {
		return nil, nil, usageError{errors.New("--db is required")}
	}
	if !input.IsDatabase(db) {
		return nil, nil, fmt.Errorf("%s is not a coordlog database (create one with replay import)", db)
	}
	l, err := pebblelog.Open(db, &pebblelog.Options{ReadOnly: true})
	if err != nil {
		return nil, nil, err
	}
	if so == nil {
		so = &snapshot.Options{ReadOnly: true}
	}
	st, err := snapshot.OpenStore(snapshotDir(db), *so)
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	return l, st, nil
}

func newSnapshotCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Create, list and verify snapshots of a coordlog database",
		Long: `A snapshot is the replayed state of one partition at a log offset (every group, member,
assignment, topology, committed and pending offset, plus the replay counters), stored in
<db>/snapshots as snap-<partition>-<next offset>.snap: msgpack, CRC-32C checksummed, written
atomically, with the identity of the log it was taken from. "replay restart" restores the
newest valid one of this log and replays only the log after it. A corrupt snapshot, or one of
another log, is skipped and the next older one is used; "snapshot create" moves corrupt ones
aside to *.broken (the other commands only read).`,
	}
	cmd.AddCommand(newSnapshotCreateCmd(stdout, stderr), newSnapshotListCmd(stdout), newSnapshotVerifyCmd(stdout, stderr))
	return cmd
}

type snapshotCreateFlags struct {
	replayFlags
	db           string
	retain       int
	everyRecords int64
	everyBytes   int64
	noTimestamp  bool
}

func newSnapshotCreateCmd(stdout, stderr io.Writer) *cobra.Command {
	var f snapshotCreateFlags
	cmd := &cobra.Command{
		Use:   "create --db <path>",
		Short: "Snapshot the state at the end of the log (or at --at-offset)",
		Long: `create brings each partition's state up to date (from its newest valid snapshot plus the log
after it, or by a full replay) and writes a snapshot of it. --every-records and --every-bytes
also write snapshots along the way while the log is replayed. --retain keeps only the newest
K snapshots per partition.`,
		Args: argsError(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshotCreate(cmd, &f, stdout, stderr)
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.db, "db", "", "the coordlog database directory")
	fl.IntVar(&f.retain, "retain", 0, "keep only the newest K snapshots per partition (0: keep all)")
	fl.Int64Var(&f.everyRecords, "every-records", 0, "also snapshot every N records while replaying")
	fl.Int64Var(&f.everyBytes, "every-bytes", 0, "also snapshot every N bytes of records while replaying")
	fl.BoolVar(&f.noTimestamp, "no-timestamp", false, "do not record the creation time (equal states give byte-identical files)")
	return cmd
}

func runSnapshotCreate(cmd *cobra.Command, f *snapshotCreateFlags, stdout, stderr io.Writer) error {
	opts, _, err := f.options()
	if err != nil {
		return err
	}
	if f.retain < 0 || f.everyRecords < 0 || f.everyBytes < 0 {
		return usageError{errors.New("--retain, --every-records and --every-bytes must not be negative")}
	}
	if f.db != "" && input.IsDatabase(f.db) {
		held, err := lockDatabase(f.db, "replay snapshot create")
		if err != nil {
			return err
		}
		defer held.Release()
	}
	l, store, err := openDB(f.db, &snapshot.Options{Retain: f.retain})
	if err != nil {
		return err
	}
	defer l.Close()
	_, positions, err := f.positionsOn(cmd, l, stderr)
	if err != nil {
		return err
	}
	stamp := func() int64 { return now().UnixMilli() }
	if f.noTimestamp {
		stamp = func() int64 { return 0 }
	}
	for _, pos := range positions {
		p, until := pos.Partition, pos.Until
		start := time.Now()
		// Bring the state up to date from the newest snapshot of this log, writing periodic
		// snapshots on the way when asked. A snapshot that cannot tell its log is not built on.
		ropts := recoveryOptions(opts)
		ropts.RequireLogIdentity = true
		rec, err := recovery.RestoreNewest(l, store, p, ropts, until)
		if err != nil {
			return err
		}
		for _, m := range rec.Messages() {
			fmt.Fprintf(stderr, "partition %d: %s\n", p, m)
		}
		e := rec.Engine
		written, err := recovery.RunWithSnapshots(cmd.Context(), e, l, until, recovery.SnapshotPolicy{
			Store: store, EveryRecords: f.everyRecords, EveryBytes: f.everyBytes, Now: stamp,
			OnSnapshot: func(in snapshot.Info) {
				fmt.Fprintf(stdout, "partition %d: periodic snapshot %s at offset %d (%s)\n", p, in.Name, in.NextOffset, mb(in.Size))
			},
		})
		if err != nil {
			return fmt.Errorf("partition %d: %w", p, err)
		}
		if n := len(written); n > 0 && written[n-1].NextOffset == e.NextOffset() {
			continue // the last periodic snapshot is already at the end
		}
		wstart := time.Now()
		in, err := recovery.TakeSnapshot(store, l, e, stamp())
		if err != nil {
			return fmt.Errorf("partition %d: %w", p, err)
		}
		from := "a full replay"
		if rec.Snapshot != nil {
			from = fmt.Sprintf("snapshot at offset %d", rec.SnapshotOffset)
		}
		fmt.Fprintf(stdout, "partition %d: snapshot %s at offset %d: %s, %s, %s written in %s (state from %s, %s)\n",
			p, in.Name, in.NextOffset, plural(int64(e.State().NumGroups()), "group"), plural(int64(e.State().NumOffsets()), "offset"), mb(in.Size), round(time.Since(wstart)), from, round(time.Since(start)))
	}
	return nil
}

func newSnapshotListCmd(stdout io.Writer) *cobra.Command {
	var db string
	var partitions []int32
	cmd := &cobra.Command{
		Use:   "list --db <path>",
		Short: "List the snapshots of a database, newest first per partition",
		Long: `list shows every snapshot file with what its header says (partition, offset, Kafka rules,
size, creation time, records replayed, groups and offsets). It reads headers only; verify
reads whole files. Quarantined files (*.broken) are listed at the end.`,
		Args: argsError(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if db == "" {
				return usageError{errors.New("--db is required")}
			}
			store, err := snapshot.OpenStore(snapshotDir(db), snapshot.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			infos, err := store.List(-1)
			if err != nil {
				return err
			}
			want := map[int32]bool{}
			for _, p := range partitions {
				want[p] = true
			}
			t := termtext.NewTable("", "PARTITION", "NEXT-OFFSET", "SIZE", "KAFKA", "CREATED", "RECORDS", "GROUPS", "OFFSETS", "FILE", "STATUS").
				Demote("KAFKA", "CREATED", "SIZE", "RECORDS", "GROUPS", "OFFSETS")
			for _, in := range infos {
				if len(want) > 0 && !want[in.Partition] {
					continue
				}
				p, next := strconv.Itoa(int(in.Partition)), strconv.FormatInt(in.NextOffset, 10)
				if in.Err != nil {
					t.Add(p, next, mb(in.Size), "-", "-", "-", "-", "-", in.Name, fmt.Sprint("unreadable: ", in.Err))
					continue
				}
				m := in.Header.Meta
				created := "-"
				if m.CreatedAtUnixMilli != 0 {
					created = time.UnixMilli(m.CreatedAtUnixMilli).UTC().Format(time.RFC3339)
				}
				t.Add(p, next, mb(in.Size), m.KafkaVersion, created, counter(m, "records"), counter(m, "groups"), counter(m, "offsets"), in.Name, "header ok")
			}
			if err := t.Write(stdout, widthOf(stdout)); err != nil {
				return err
			}
			broken, err := store.Broken()
			if err != nil {
				return err
			}
			for _, b := range broken {
				fmt.Fprintf(stdout, "quarantined: %s\n", b)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "the coordlog database directory")
	cmd.Flags().Int32SliceVar(&partitions, "partition", nil, "only these partitions (repeatable)")
	return cmd
}

func newSnapshotVerifyCmd(stdout, stderr io.Writer) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "verify --db <path> [snapshot-file...]",
		Short: "Check snapshots: checksum, format, the log they were taken from, and that the state restores",
		Long: `verify reads each snapshot (all of them when no file is named) in full: magic, format
version, checksum, the name against the header, that it was taken from this database's log
(the batches its header records have the same offsets and CRCs here), and that the payload
decodes and restores a state. It changes nothing (snapshot create moves corrupt files aside;
verify only reports). The exit code is 1 when any snapshot is bad.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, store, err := openDB(db, nil)
			if err != nil {
				return err
			}
			defer l.Close()
			names := args
			if len(names) == 0 {
				infos, err := store.List(-1)
				if err != nil {
					return err
				}
				for _, in := range infos {
					names = append(names, in.Name)
				}
			}
			if len(names) == 0 {
				fmt.Fprintf(stdout, "no snapshots in %s\n", store.Dir())
				return nil
			}
			bad := 0
			for _, name := range names {
				start := time.Now()
				e, in, err := recovery.LoadSnapshot(store, filepath.Base(name), replay.Options{})
				note := ""
				if err == nil {
					// Only a snapshot of this log restores to a state of it.
					switch lerr := recovery.CheckLog(l, in.Header.Meta); {
					case errors.Is(lerr, recovery.ErrNoLogIdentity):
						note = fmt.Sprintf(" (%v)", lerr)
					case lerr != nil:
						err = fmt.Errorf("snapshot %s: %w", in.Name, lerr)
					}
				}
				if err != nil {
					bad++
					fmt.Fprintf(stdout, "BAD  %s: %v\n", name, err)
					continue
				}
				fmt.Fprintf(stdout, "ok   %s: partition %d offset %d, Kafka %s rules, %s, %s, %s, checked in %s%s\n",
					in.Name, in.Partition, in.NextOffset, in.Header.Meta.KafkaVersion, plural(int64(e.State().NumGroups()), "group"), plural(int64(e.State().NumOffsets()), "offset"), mb(in.Size), round(time.Since(start)), note)
			}
			if bad > 0 {
				return exitCodeError{code: exitFindings, msg: fmt.Sprintf("%d of %s %s bad", bad, plural(int64(len(names)), "snapshot"), pluralWord(bad, "is", "are"))}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "the coordlog database directory")
	return cmd
}

func counter(m snapshot.Meta, name string) string {
	if v, ok := m.Counter(name); ok {
		return fmt.Sprint(v)
	}
	return "-"
}

func mb(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// fromSnapshotUsage is the help of --from-snapshot on describe and offsets.
const fromSnapshotUsage = "start from the newest valid snapshot in <db>/snapshots and replay only the log after it (coordlog databases only)"

// recoverInput is replayInput for --from-snapshot: each partition is restored from its newest
// usable snapshot (at or before --at-offset) and the rest of the log is replayed. What was
// restored, and every snapshot skipped on the way, is reported on stderr.
func recoverInput(cmd *cobra.Command, path string, f *replayFlags, stderr io.Writer) (*replayed, error) {
	opts, mode, err := f.options()
	if err != nil {
		return nil, err
	}
	if !input.IsDatabase(path) {
		return nil, usageError{fmt.Errorf("--from-snapshot needs a coordlog database; %s holds Kafka segments", path)}
	}
	in, err := openInput(cmd, path, mode)
	if err != nil {
		return nil, err
	}
	at, positions, err := f.positionsOn(cmd, in, stderr)
	if err != nil {
		in.close()
		return nil, err
	}
	store, err := snapshot.OpenStore(snapshotDir(path), snapshot.Options{ReadOnly: true})
	if err != nil {
		in.close()
		return nil, err
	}
	r := &replayed{in: in, opts: opts, at: at, positions: positions}
	for _, pos := range positions {
		p := pos.Partition
		rec, err := recovery.RecoverTo(cmd.Context(), in, store, p, recoveryOptions(opts), pos.Until)
		if err != nil {
			in.close()
			return nil, fmt.Errorf("%w (use --forensic to record it and continue)", err)
		}
		for _, m := range rec.Messages() {
			fmt.Fprintf(stderr, "partition %d: %s\n", p, m)
		}
		from := restoredFrom{tail: rec.Engine.Stats().Records}
		if rec.Snapshot != nil {
			fmt.Fprintf(stderr, "partition %d: from snapshot %s at offset %d, %s replayed from the tail\n", p, rec.Snapshot.Name, rec.SnapshotOffset, plural(rec.TailRecords, "record"))
			from.Snapshot, from.NextOffset = rec.Snapshot.Name, rec.SnapshotOffset
			if n, ok := rec.Snapshot.Header.Meta.Counter("records"); ok {
				from.tail -= n
			}
		} else {
			fmt.Fprintf(stderr, "partition %d: no usable snapshot, full replay\n", p)
		}
		r.results = append(r.results, replay.Result{Engine: rec.Engine})
		r.restored = append(r.restored, from)
	}
	r.printViolations(stderr)
	return r, nil
}
