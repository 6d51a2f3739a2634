package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
)

type timelineFlags struct {
	replayFlags
	live  liveFlags
	group string
	since string
	until string
}

func newTimelineCmd(stdout, stderr io.Writer) *cobra.Command {
	var f timelineFlags
	cmd := &cobra.Command{
		Use:   "timeline <segments-dir|db> --group G | --bootstrap-server HOST:PORT --group G",
		Short: "Every record that touched a group, in log order, each explained in one line",
		Long: `timeline replays the log and prints every record of one group in log order, with a one-line
explanation: members joining and leaving, epoch changes, target assignments (with the number of
members written in the same batch), current assignments, topologies, offsets committed directly
or by a transaction, and the transaction markers that made pending offsets visible or dropped
them.

--since and --until (RFC 3339, -2h, Unix ms) print only the events of records stamped within
them (the whole log is still replayed, so that each event is explained with what came before);
--at-time is --until and --at-offset stops after that offset, as on the other commands.`,
		Args: f.live.args(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.group == "" {
				return usageError{fmt.Errorf("timeline needs --group")}
			}
			path := ""
			if !f.live.set() {
				path = args[0]
			}
			return runTimeline(cmd, path, &f, stdout, stderr)
		},
	}
	f.register(cmd)
	f.live.register(cmd)
	cmd.Flags().StringVar(&f.group, "group", "", "the group id (required)")
	cmd.Flags().StringVar(&f.since, "since", "", "only events from each partition's first record stamped at or after this time")
	cmd.Flags().StringVar(&f.until, "until", "", "only events up to each partition's last record stamped at or before this time (as --at-time)")
	return cmd
}

func runTimeline(cmd *cobra.Command, path string, f *timelineFlags, stdout, stderr io.Writer) error {
	if err := f.live.noFollow(cmd); err != nil {
		return err
	}
	if f.until != "" {
		if f.set() {
			return usageError{fmt.Errorf("--until is --at-time: give one of --until, --at-time and --at-offset")}
		}
		f.atTime = f.until
	}
	var from map[int32]int64
	if f.since != "" {
		if f.live.set() {
			return usageError{fmt.Errorf("--since reads the log twice: not on a live cluster")}
		}
		_, mode, err := f.options()
		if err != nil {
			return err
		}
		in, err := openInput(cmd, path, mode)
		if err != nil {
			return err
		}
		at, _ := f.point()
		parts, err := selectFor(in, f.partitions, at)
		if err == nil {
			var w map[int32]offsetRange
			if w, err = timeWindow(cmd, in, parts, f.since, "", stderr); err == nil {
				from = map[int32]int64{}
				for p, r := range w {
					from[p] = r.from
				}
			}
		}
		in.close()
		if err != nil {
			return err
		}
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	found, shown := 0, 0
	obs := func(p int32) replay.Observer {
		return explain.NewTimeline(f.group, p, func(ev *explain.Event) {
			found++
			if from != nil && ev.Offset < from[p] {
				return
			}
			shown++
			printTimelineEvent(out, ev)
		})
	}
	var r *replayed
	var err error
	if f.live.set() {
		r, err = replayLiveSequential(cmd, &f.replayFlags, &f.live, obs, stderr)
	} else {
		r, err = replayInput(cmd, path, &f.replayFlags, obs, stderr)
	}
	if err != nil {
		return err
	}
	defer r.close()
	if found == 0 {
		out.Flush()
		if err := groupExists(r, f.group); err != nil {
			return err
		}
		return fmt.Errorf("no record of group %q in the log", f.group)
	}
	if shown == 0 {
		fmt.Fprintf(out, "no record of group %q in the window (%d before it)\n", f.group, found)
	}
	return nil
}

// printTimelineEvent writes one event: its position in the log, its time and what it did.
func printTimelineEvent(w io.Writer, ev *explain.Event) {
	txn := ""
	if ev.ProducerID >= 0 {
		txn = fmt.Sprintf(" pid %d", ev.ProducerID)
	}
	fmt.Fprintf(w, "p%d offset %d [batch %d%s] %s  %s\n", ev.Partition, ev.Offset, ev.BatchBase, txn, msTime(ev.Timestamp), ev.Text())
}
