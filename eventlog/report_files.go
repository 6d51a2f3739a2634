package eventlog

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Render writes the report for a person: files ignored on purpose (warnings) and batches
// superseded by earlier segment files (not damage: Kafka's reads skip them too) to notes,
// damaged input to damage. Unless verbose (and the report kept every problem: KeepAll),
// problems are counted per file and kind, one line each with where the first one is; verbose
// gives every problem its own line.
func (r *Report) Render(notes, damage io.Writer, verbose bool) {
	for _, warn := range r.Warnings() {
		fmt.Fprintln(notes, "warning:", warn)
	}
	total := r.Count()
	if total == 0 {
		return
	}
	if verbose && r.KeepAll {
		fmt.Fprintf(damage, "%s in the input:\n", count(total, "problem"))
		for _, p := range r.Problems() {
			fmt.Fprintf(damage, "  %s (skipped %s, %s, %s)\n", p.Error(), count(p.SkippedBatches, "batch"), count(p.SkippedRecords, "record"), count(p.SkippedBytes, "byte"))
		}
		return
	}
	var damaged []ProblemGroup
	var n int64
	for _, t := range r.Groups() {
		if t.Kind.Damage() {
			damaged = append(damaged, t)
			n += t.Problems
			continue
		}
		fmt.Fprintf(notes, "note: %s: %s below the offsets earlier segment files reached (%s, base offsets %d to %d): superseded, skipped as Kafka's reads skip them (--verbose lists each)\n",
			t.File, count(t.Batches, "batch"), count(t.Records, "record"), t.First.Offset, t.Last.Offset)
	}
	if len(damaged) == 0 {
		return
	}
	fmt.Fprintf(damage, "%s in the input (--verbose lists each):\n", count(n, "problem"))
	for _, t := range damaged {
		first := "the first at"
		if t.Problems == 1 {
			first = "at"
		}
		off := "unknown"
		if t.First.Offset >= 0 {
			off = strconv.FormatInt(t.First.Offset, 10)
		}
		fmt.Fprintf(damage, "  %s: %s (skipped %s, %s, %s), %s byte %d (partition %d, base offset %s): %s\n", t.File, count(t.Problems, string(t.Kind)+" problem"),
			count(t.Batches, "batch"), count(t.Records, "record"), count(t.Bytes, "byte"), first, t.First.Pos, t.Partition, off, t.First.Detail)
	}
}

// count renders "1 batch", "2 batches".
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
