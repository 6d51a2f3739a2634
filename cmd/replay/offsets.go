package main

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/groupstate"
)

type offsetsFlags struct {
	replayFlags
	group  string
	format string
}

func newOffsetsCmd(stdout, stderr io.Writer) *cobra.Command {
	var f offsetsFlags
	cmd := &cobra.Command{
		Use:   "offsets <segments-dir|db>",
		Short: "Committed offsets, with the record that wrote each, and open transactional offsets",
		Long: `offsets replays the log and lists every committed offset with the log offset of the record that
wrote it and its commit time, then the offsets of transactions still open at that point
(pending: written by a producer whose COMMIT or ABORT marker has not been replayed), by producer
id. --at-offset shows them as they were after that offset.`,
		Args: argsError(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOffsets(cmd, args[0], &f, stdout, stderr)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&f.fromSnapshot, "from-snapshot", false, fromSnapshotUsage)
	cmd.Flags().StringVar(&f.group, "group", "", "only this group")
	cmd.Flags().StringVar(&f.format, "format", "table", "table or json")
	return cmd
}

type offsetsDoc struct {
	KafkaVersion string           `json:"kafkaVersion"`
	AtOffset     *int64           `json:"atOffset"`
	Partitions   []offsetsPartDoc `json:"partitions"`
}

type offsetsPartDoc struct {
	Partition           int32                           `json:"partition"`
	NextOffset          int64                           `json:"nextOffset"`
	Offsets             []groupstate.CommittedOffset    `json:"offsets"`
	PendingTransactions []groupstate.PendingTransaction `json:"pendingTransactions"`
}

func runOffsets(cmd *cobra.Command, path string, f *offsetsFlags, stdout, stderr io.Writer) error {
	if f.format != "table" && f.format != "json" {
		return usageError{fmt.Errorf("--format must be table or json, not %q", f.format)}
	}
	r, err := replayInput(cmd, path, &f.replayFlags, nil, false, stderr)
	if err != nil {
		return err
	}
	defer r.close()
	doc := offsetsDoc{KafkaVersion: r.opts.Version.String(), Partitions: []offsetsPartDoc{}}
	if f.atOffset >= 0 {
		doc.AtOffset = &f.atOffset
	}
	for _, res := range r.results {
		st := res.Engine.State()
		pd := offsetsPartDoc{Partition: res.Engine.Partition(), NextOffset: res.Engine.NextOffset(),
			PendingTransactions: []groupstate.PendingTransaction{}}
		for _, pt := range st.PendingTransactions() {
			var keep []groupstate.CommittedOffset
			for _, o := range pt.Offsets {
				if f.group == "" || o.GroupID == f.group {
					keep = append(keep, o)
				}
			}
			if len(keep) > 0 {
				pd.PendingTransactions = append(pd.PendingTransactions, groupstate.PendingTransaction{ProducerID: pt.ProducerID, Offsets: keep})
			}
		}
		doc.Partitions = append(doc.Partitions, pd)
	}
	// Committed offsets are read from the state one group at a time while printing, so that
	// millions of them print in bounded memory.
	groupsOf := func(i int) []string {
		if f.group != "" {
			return []string{f.group}
		}
		return r.results[i].Engine.State().OffsetGroupIDs()
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if f.format == "json" {
		js := &jsonStream{w: out}
		js.raw("{\n")
		js.field(1, "kafkaVersion", doc.KafkaVersion, true)
		js.field(1, "atOffset", doc.AtOffset, true)
		js.raw(indent(1) + `"partitions": [`)
		for i, p := range doc.Partitions {
			st := r.results[i].Engine.State()
			js.sep(i, 2)
			js.raw("{\n")
			js.field(3, "partition", p.Partition, true)
			js.field(3, "nextOffset", p.NextOffset, true)
			js.raw(indent(3) + `"offsets": [`)
			n := 0
			for _, g := range groupsOf(i) {
				for _, o := range st.Offsets(g) {
					js.sep(n, 4)
					js.value(4, o)
					n++
				}
			}
			js.close(n, 3, "],\n")
			js.field(3, "pendingTransactions", p.PendingTransactions, false)
			js.raw("\n" + indent(2) + "}")
		}
		js.close(len(doc.Partitions), 1, "]")
		js.raw("\n}\n")
		return js.err
	}
	for i, p := range doc.Partitions {
		st := r.results[i].Engine.State()
		total := 0
		for _, g := range groupsOf(i) {
			total += len(st.Offsets(g))
		}
		fmt.Fprintf(out, "Partition %d (next offset %d): %d committed offsets\n", p.Partition, p.NextOffset, total)
		if total > 0 {
			t := tw(out)
			fmt.Fprintln(t, offsetsHeader)
			rows := 0
			for _, g := range groupsOf(i) {
				for _, o := range st.Offsets(g) {
					offsetRow(t, o)
					if rows++; rows%10000 == 0 {
						t.Flush() // columns align within each block of rows: memory stays bounded
					}
				}
			}
			t.Flush()
		}
		for _, pt := range p.PendingTransactions {
			fmt.Fprintf(out, "Open transaction of producer %d: %d pending offsets (not committed)\n", pt.ProducerID, len(pt.Offsets))
			printOffsetsWithTime(out, pt.Offsets)
		}
	}
	return nil
}

const offsetsHeader = "  GROUP\tTOPIC\tPARTITION\tCOMMITTED-OFFSET\tLEADER-EPOCH\tMETADATA\tCOMMITTED-AT\tRECORD-OFFSET"

func offsetRow(t io.Writer, o groupstate.CommittedOffset) {
	fmt.Fprintf(t, "  %s\t%s\t%d\t%d\t%d\t%q\t%s\t%d\n", o.GroupID, o.Topic, o.Partition, o.CommittedOffset, o.LeaderEpoch,
		o.Metadata, msTime(o.CommitTimestamp), o.RecordOffset)
}

func printOffsetsWithTime(w io.Writer, offs []groupstate.CommittedOffset) {
	t := tw(w)
	fmt.Fprintln(t, offsetsHeader)
	for _, o := range offs {
		offsetRow(t, o)
	}
	t.Flush()
}

// msTime renders a Kafka millisecond timestamp in UTC.
func msTime(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
