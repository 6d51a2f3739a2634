package termtext

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func render(t *Table, width int) string {
	var b strings.Builder
	if err := t.Write(&b, width); err != nil {
		panic(err)
	}
	return b.String()
}

func members() *Table {
	t := NewTable("  ", "MEMBER-ID", "CLIENT-ID", "EPOCH", "ASSIGNMENT")
	t.Add("HmGHS5ApQtOwaCD8tSReMg", "c1", "7", "orders:0,1,2,3,4,5;payments:0,1")
	t.Add("s7g17GuwThqk2ywlEyPtLA", "c3-restarted", "7", "orders:6,7")
	return t
}

// TestTableLayouts: the same table in each of its four layouts, by width.
func TestTableLayouts(t *testing.T) {
	require.Equal(t, ""+
		"  MEMBER-ID               CLIENT-ID     EPOCH  ASSIGNMENT\n"+
		"  HmGHS5ApQtOwaCD8tSReMg  c1            7      orders:0,1,2,3,4,5;payments:0,1\n"+
		"  s7g17GuwThqk2ywlEyPtLA  c3-restarted  7      orders:6,7\n",
		render(members(), 0), "no limit: one line per row")
	require.Equal(t, render(members(), 0), render(members(), 87), "fits exactly")

	require.Equal(t, ""+
		"  MEMBER-ID               CLIENT-ID     EPOCH  ASSIGNMENT\n"+
		"  HmGHS5ApQtOwaCD8tSReMg  c1            7      orders:0,1,2,3,4,5;\n"+
		"                                               payments:0,1\n"+
		"  s7g17GuwThqk2ywlEyPtLA  c3-restarted  7      orders:6,7\n",
		render(members(), 70), "the list wraps after a separator inside its column")

	require.Equal(t, ""+
		"  MEMBER-ID               CLIENT-ID     EPOCH\n"+
		"  HmGHS5ApQtOwaCD8tSReMg  c1            7\n"+
		"      ASSIGNMENT orders:0,1,2,3,4,5;payments:0,1\n"+
		"  s7g17GuwThqk2ywlEyPtLA  c3-restarted  7\n"+
		"      ASSIGNMENT orders:6,7\n",
		render(members(), 50), "the last column goes to a detail line")

	vertical := func() *Table {
		t := members()
		t.vertical = true
		return t
	}
	require.Equal(t, ""+
		"  - MEMBER-ID   HmGHS5ApQtOwaCD8tSReMg\n"+
		"    CLIENT-ID   c1\n"+
		"    EPOCH       7\n"+
		"    ASSIGNMENT  orders:0,1,2,3,4,5;\n"+
		"                payments:0,1\n"+
		"  - MEMBER-ID   s7g17GuwThqk2ywlEyPtLA\n"+
		"    CLIENT-ID   c3-restarted\n"+
		"    EPOCH       7\n"+
		"    ASSIGNMENT  orders:6,7\n",
		render(vertical(), 40), "a vertical table: one field per line")
	require.Equal(t, render(members(), 0), render(vertical(), 0), "a vertical table with no limit is a grid")

	require.Equal(t, render(vertical(), 30), render(members(), 30), "not two columns fit: vertical")
}

// TestTableDemote: demoted columns leave the grid before the trailing ones; empty cells are
// left out of the detail lines.
func TestTableDemote(t *testing.T) {
	tb := NewTable("", "GROUP", "PROTOCOL", "STATE", "MEMBERS", "LAST-ACTIVITY").Demote("PROTOCOL")
	tb.Add("orders", "consumer", "Stable", "3", "2026-11-29T19:07:40.337Z")
	tb.Add("audit", "-", "Empty", "0", "2026-11-29T19:07:40.337Z")
	require.Equal(t, ""+
		"GROUP   STATE   MEMBERS  LAST-ACTIVITY\n"+
		"orders  Stable  3        2026-11-29T19:07:40.337Z\n"+
		"    PROTOCOL consumer\n"+
		"audit   Empty   0        2026-11-29T19:07:40.337Z\n",
		render(tb, 50))
}

// TestTableWrapsTheFewest: narrowing goes to the column where the fewest cells wrap, not the
// widest one.
func TestTableWrapsTheFewest(t *testing.T) {
	tb := NewTable("", "SUBJECT", "TO")
	tb.Add("member ECDg_i2EQ46K8Hjii1dsRQ", "6")
	tb.Add("member HmGHS5ApQtOwaCD8tSReMg", "client c4-fenced, host /127.0.0.1")
	tb.Add("member bbi2AlqJRGaie6MHiLbrkQ", "s2-in:2,3")
	require.Equal(t, ""+
		"SUBJECT                        TO\n"+
		"member ECDg_i2EQ46K8Hjii1dsRQ  6\n"+
		"member HmGHS5ApQtOwaCD8tSReMg  client c4-fenced, host\n"+
		"                               /127.0.0.1\n"+
		"member bbi2AlqJRGaie6MHiLbrkQ  s2-in:2,3\n",
		render(tb, 55))
}

// TestTableBlocks: a table written in blocks keeps the layout of its first block (column widths
// are each block's) and prints its header once.
func TestTableBlocks(t *testing.T) {
	tb := NewTable("", "GROUP", "TOPIC", "COMMITTED-AT")
	var b strings.Builder
	tb.Add("orders", "s1-in", "19:07:40")
	require.NoError(t, tb.Write(&b, 25))
	tb.Add("a-longer-group", "s1-in", "19:07:41")
	require.NoError(t, tb.Write(&b, 25))
	require.Equal(t, ""+
		"GROUP   TOPIC\n"+
		"orders  s1-in\n"+
		"    COMMITTED-AT 19:07:40\n"+
		"a-longer-group  s1-in\n"+
		"    COMMITTED-AT 19:07:41\n",
		b.String())
}

func TestWrapText(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"GROUP g  TYPE consumer  STATE Stable  GROUP-EPOCH 7", 30, []string{"GROUP g  TYPE consumer", "  STATE Stable  GROUP-EPOCH 7"}},
		{"one two three four five six", 12, []string{"one two", "  three four", "  five six"}},
		{"orders:0,1,2,3,4,5,6,7,8", 12, []string{"orders:0,1,", "  2,3,4,5,6,", "  7,8"}},
		{"abcdefghijklmnopqrstuvwxyz", 10, []string{"abcdefghij", "  klmnopqr", "  stuvwxyz"}},
		{"consumer-account_service-1-a1b5e22b-0b32-4de6-a917-0eaceee54435", 50, []string{"consumer-account_service-1-a1b5e22b-0b32-4de6-", "  a917-0eaceee54435"}},
		// The indentation stays on the first line (never a break in it); paths break after "/".
		{"    /tmp/TestQuiet/001/__consumer_offsets-0/00000000000000000000.log: 2 bad-crc problems", 40,
			[]string{"    /tmp/TestQuiet/001/", "  __consumer_offsets-0/", "  00000000000000000000.log: 2 bad-crc", "  problems"}},
	} {
		got := Wrap(c.in, c.width, "  ")
		require.Equal(t, c.want, got, "%q at %d", c.in, c.width)
		for _, l := range got {
			require.LessOrEqual(t, utf8.RuneCountInString(l), c.width)
		}
	}
}

// TestFitWriter: lines longer than the width wrap with their indentation plus four; shorter
// ones, a partial line until it ends, and everything at width 0 pass as they are.
func TestFitWriter(t *testing.T) {
	var b strings.Builder
	f := &FitWriter{W: &b, Width: 24}
	fmt.Fprint(f, "  a line that is too long for it\nok\npart")
	require.Equal(t, "  a line that is too\n      long for it\nok\n", b.String())
	fmt.Fprint(f, "ial\n")
	require.Equal(t, "  a line that is too\n      long for it\nok\npartial\n", b.String())
	b.Reset()
	f = &FitWriter{W: &b}
	fmt.Fprint(f, strings.Repeat("x", 300)+"\n")
	require.Len(t, b.String(), 301)
}
