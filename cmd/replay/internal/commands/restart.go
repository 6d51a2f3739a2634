package commands

import (
	"fmt"
	"io"

	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/spf13/cobra"
)

type restartFlags struct {
	replayFlags
	db, format  string
	compareFull bool
}

func newRestartCmd(stdout, stderr io.Writer) *cobra.Command {
	var f restartFlags
	cmd := &cobra.Command{
		Use:   "restart --db <path>",
		Short: "Restore each partition as a restarting coordinator would: newest snapshot plus the log tail",
		Long: `restart rebuilds each partition's state the way a coordinator restarts: it restores the newest
valid snapshot in <db>/snapshots (a corrupt one, one taken from another log or built with other
Kafka rules is skipped, and the next older one used; restart only reads: "snapshot create"
moves corrupt ones aside) and replays only the log after it. It reports the snapshot offset,
the records replayed from the tail and the time of each phase: verify (check the snapshot's header, meta and trailer), decode (read the snapshot
once, matching its CRC, and decode it on every core), restore (assemble the state), tail
(while the other cores check the restored offsets), and what of that check was left after it. With no usable snapshot it replays the whole log.

--compare-full also replays the whole log, reports how much faster the restart was and checks
that both give the same state.`,
		Args: argsError(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRestart(cmd, &f, stdout, stderr)
		},
	}
	f.replayFlags.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.db, "db", "", "the coordlog database directory")
	fl.StringVar(&f.format, "format", "text", "text or json")
	fl.BoolVar(&f.compareFull, "compare-full", false, "also replay the whole log and compare time and state")
	return cmd
}

func runRestart(cmd *cobra.Command, f *restartFlags, stdout, stderr io.Writer) error {
	if f.format != "text" && f.format != "json" {
		return usageError{fmt.Errorf("--format must be text or json, not %q", f.format)}
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	db, err := openDB(f.db, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	positions, err := f.positionsOn(cmd, db.Log, stderr)
	if err != nil {
		return err
	}
	doc := jsondoc.Restart{SchemaVersion: jsondoc.SchemaVersion}
	differ := 0
	for _, pos := range positions {
		r, err := db.Restart(cmd.Context(), pos, opts, true, f.compareFull)
		if err != nil {
			return err
		}
		if r.Full != nil && !r.Full.Same {
			differ++
			for _, line := range r.Full.Diff {
				fmt.Fprintf(stderr, "partition %d: differs from full replay: %s\n", pos.Partition, line)
			}
		}
		doc.Partitions = append(doc.Partitions, jsondoc.RestartOf(pos.Partition, r))
	}
	if f.format == "json" {
		if err := jsondoc.NewEncoder(stdout).Encode(doc); err != nil {
			return err
		}
	} else {
		for _, d := range doc.Partitions {
			printRestart(stdout, d)
		}
	}
	if differ > 0 {
		return fmt.Errorf("%s restored to a state that differs from a full replay", plural(int64(differ), "partition"))
	}
	return nil
}

func printRestart(w io.Writer, d jsondoc.RestartPartition) {
	for _, m := range d.Messages {
		fmt.Fprintf(w, "partition %d: %s\n", d.Partition, m)
	}
	if d.Snapshot == "" {
		fmt.Fprintf(w, "partition %d: no usable snapshot: full replay of %s\n", d.Partition, plural(d.TailRecords, "record"))
	} else {
		fmt.Fprintf(w, "partition %d: restored snapshot %s at offset %d, replayed %s (%s) from the tail\n",
			d.Partition, d.Snapshot, d.SnapshotOffset, plural(d.TailRecords, "record"), plural(d.TailBatches, "batch/batches"))
	}
	fmt.Fprintf(w, "  next offset %d, %s, %s\n", d.NextOffset, plural(int64(d.Groups), "group"), plural(int64(d.Offsets), "offset"))
	fmt.Fprintf(w, "  time: verify %.1f ms, decode %.1f ms, restore %.1f ms, tail %.1f ms, offset check after the tail %.1f ms, total %.1f ms\n",
		d.VerifyMs, d.DecodeMs, d.RestoreMs, d.TailMs, d.CheckMs, d.TotalMs)
	if d.FullReplayMs != nil {
		speed := "-"
		if d.TotalMs > 0 {
			speed = fmt.Sprintf("%.1fx", *d.FullReplayMs/d.TotalMs)
		}
		same := "same state"
		if !*d.SameState {
			same = "DIFFERENT STATE"
		}
		fmt.Fprintf(w, "  full replay %.1f ms (restart %s faster), %s\n", *d.FullReplayMs, speed, same)
	}
}
