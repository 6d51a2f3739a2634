package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay/query"
)

// The cells and values the commands' tables and prose share.

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func strp(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func int32p(v *int32) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(int(*v))
}

func intsLabel(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}

// epochCell renders a leader epoch for a table: "-" for none (-1), as kafka-consumer-groups
// prints it.
func epochCell(e int32) string {
	if e < 0 {
		return "-"
	}
	return strconv.Itoa(int(e))
}

// offsetsHeader are the columns of a listing of committed offsets.
var offsetsHeader = []string{"GROUP", "TOPIC", "PARTITION", "COMMITTED-OFFSET", "LEADER-EPOCH", "METADATA", "COMMITTED-AT", "RECORD-OFFSET"}

func offsetCells(o groupstate.CommittedOffset) []string {
	return []string{o.GroupID, o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.CommittedOffset, 10), epochCell(o.LeaderEpoch),
		strconv.Quote(o.Metadata), query.FormatMillis(o.CommitTimestamp), strconv.FormatInt(o.RecordOffset, 10)}
}

// printOffsets writes a table of committed offsets, with their group or under it.
func printOffsets(w io.Writer, offs []groupstate.CommittedOffset, withGroup bool, width int) {
	header := offsetsHeader
	if !withGroup {
		header = header[1:]
	}
	t := termtext.NewTable("  ", header...).Demote("LEADER-EPOCH", "RECORD-OFFSET")
	for _, o := range offs {
		cells := offsetCells(o)
		if !withGroup {
			cells = cells[1:]
		}
		t.Add(cells...)
	}
	t.Write(w, width)
}

// mb renders a snapshot's size.
func mb(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// byteSize renders a file size for people: "84 KiB", "3.2 MiB".
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", (n+512)>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// round rounds a duration to what a person reads.
func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
