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
	group string
}

func newTimelineCmd(stdout, stderr io.Writer) *cobra.Command {
	var f timelineFlags
	cmd := &cobra.Command{
		Use:   "timeline <segments-dir|db> --group G",
		Short: "Every record that touched a group, in log order, each explained in one line",
		Long: `timeline replays the log and prints every record of one group in log order, with a one-line
explanation: members joining and leaving, epoch changes, target assignments (with the number of
members written in the same batch), current assignments, topologies, offsets committed directly
or by a transaction, and the transaction markers that made pending offsets visible or dropped
them.`,
		Args: argsError(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.group == "" {
				return usageError{fmt.Errorf("timeline needs --group")}
			}
			return runTimeline(cmd, args[0], &f, stdout, stderr)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.group, "group", "", "the group id (required)")
	return cmd
}

func runTimeline(cmd *cobra.Command, path string, f *timelineFlags, stdout, stderr io.Writer) error {
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	found := 0
	obs := func(p int32) replay.Observer {
		return explain.NewTimeline(f.group, p, func(ev *explain.Event) {
			found++
			printTimelineEvent(out, ev)
		})
	}
	r, err := replayInput(cmd, path, &f.replayFlags, obs, false, stderr) // events print in partition order
	if err != nil {
		return err
	}
	defer r.close()
	if found == 0 {
		fmt.Fprintf(out, "no record of group %q in the log\n", f.group)
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
