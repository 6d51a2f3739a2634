package commands

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay/recovery"
	"github.com/coordlog/coordlog/replay/session"
	"github.com/coordlog/coordlog/snapshot"
)

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
	db                       string
	retain                   int
	everyRecords, everyBytes int64
	noTimestamp              bool
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
	opts, err := f.options()
	if err != nil {
		return err
	}
	if f.retain < 0 || f.everyRecords < 0 || f.everyBytes < 0 {
		return usageError{errors.New("--retain, --every-records and --every-bytes must not be negative")}
	}
	if f.db != "" && input.IsDatabase(f.db) {
		held, err := session.LockDatabase(f.db, "replay snapshot create")
		if err != nil {
			return err
		}
		defer held.Release()
	}
	db, err := openDB(f.db, &snapshot.Options{Retain: f.retain})
	if err != nil {
		return err
	}
	defer db.Close()
	positions, err := f.positionsOn(cmd, db.Log, stderr)
	if err != nil {
		return err
	}
	req := session.SnapshotRequest{Options: opts, EveryRecords: f.everyRecords, EveryBytes: f.everyBytes, PauseGC: true,
		Now: func() int64 { return Now().UnixMilli() },
		Periodic: func(p int32, in snapshot.Info) {
			fmt.Fprintf(stdout, "partition %d: periodic snapshot %s at offset %d (%s)\n", p, in.Name, in.NextOffset, mb(in.Size))
		},
		Trace: &session.Trace{Restored: func(p int32, rec *recovery.Recovery) {
			for _, m := range rec.Messages() {
				fmt.Fprintf(stderr, "partition %d: %s\n", p, m)
			}
		}},
	}
	if f.noTimestamp {
		req.Now = nil
	}
	return db.TakeSnapshots(cmd.Context(), positions, req, func(t session.SnapshotTaken) error {
		if t.Info == nil {
			return nil // the last periodic snapshot is already at the end
		}
		from := "a full replay"
		if t.From.Snapshot != nil {
			from = fmt.Sprintf("snapshot at offset %d", t.From.SnapshotOffset)
		}
		st := t.Engine.State()
		fmt.Fprintf(stdout, "partition %d: snapshot %s at offset %d: %s, %s, %s written in %s (state from %s, %s)\n",
			t.Partition, t.Info.Name, t.Info.NextOffset, plural(int64(st.NumGroups()), "group"), plural(int64(st.NumOffsets()), "offset"), mb(t.Info.Size), round(t.Write), from, round(t.Total))
		return nil
	})
}

// openDB opens the coordlog database --db names, read-only, and its snapshot store: for
// writing snapshots (with retention) when store is set, else read-only.
func openDB(db string, store *snapshot.Options) (*session.Database, error) {
	if db == "" {
		return nil, usageError{errors.New("--db is required")}
	}
	return session.OpenDatabase(db, store)
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
			store, err := snapshot.OpenStore(recovery.StoreDir(db), snapshot.Options{ReadOnly: true})
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
			d, err := openDB(db, nil)
			if err != nil {
				return err
			}
			defer d.Close()
			checked, bad := 0, 0
			err = d.Verify(args, func(c session.SnapshotCheck) {
				checked++
				if c.Err != nil {
					bad++
					fmt.Fprintf(stdout, "BAD  %s: %v\n", c.Name, c.Err)
					return
				}
				note := ""
				if c.Note != nil {
					note = fmt.Sprintf(" (%v)", c.Note)
				}
				st := c.Engine.State()
				fmt.Fprintf(stdout, "ok   %s: partition %d offset %d, Kafka %s rules, %s, %s, %s, checked in %s%s\n", c.Info.Name, c.Info.Partition, c.Info.NextOffset,
					c.Info.Header.Meta.KafkaVersion, plural(int64(st.NumGroups()), "group"), plural(int64(st.NumOffsets()), "offset"), mb(c.Info.Size), round(c.Took), note)
			})
			switch {
			case err != nil:
				return err
			case checked == 0:
				fmt.Fprintf(stdout, "no snapshots in %s\n", d.Snapshots.Dir())
			case bad > 0:
				return exitCodeError{code: ExitFindings, msg: fmt.Sprintf("%d of %s %s bad", bad, plural(int64(checked), "snapshot"), pluralWord(bad, "is", "are"))}
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
