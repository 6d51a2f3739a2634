package termtext

import (
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Table is a block of aligned columns: a header and rows of cells, rendered in one place so that
// every table fits the output's width (0 is no limit: replay's --wide). Columns are two
// spaces apart. The layout is the first of these that fits:
//
//  1. every row on one line, each column as wide as its widest cell (always, with --wide);
//  2. the same grid with long cells wrapped inside narrower columns (narrowing the column
//     where the fewest cells then wrap): lists break after "," or ";" ("orders:0,1,2,"),
//     text at spaces;
//  3. the columns that fit stay a grid, and each row's other cells follow it on indented
//     "LABEL value" lines (empty cells, "-", left out): listings such as groups and offsets,
//     whose rows stay one block each. The columns a table demotes leave the grid first, then
//     the trailing ones;
//  4. one field per line (empty cells left out), each row a block starting with "- " (psql's
//     expanded display): when not even two columns fit, or at once for tables made vertical,
//     such as describe's members, whose assignments read best one list per line
//     (kafka-streams-groups --describe --members --verbose puts them all in one last column).
//
// Cells must not hold tabs or line breaks; widths count runes.
type Table struct {
	indent   string
	header   []string
	rows     [][]string
	vertical bool // past layout 2, go vertical (4) rather than to detail lines (3)
	// demoted are the columns that leave the grid for the detail lines first (in this order),
	// before the trailing ones: those a reader needs least to tell rows apart.
	demoted []int
	// layout is decided by the first write and kept by later ones (a table written in blocks of
	// rows, so that millions of rows print in bounded memory).
	layout *tableLayout
}

type layoutKind int

const (
	layoutGrid     layoutKind = iota // layouts 1 and 2
	layoutDetails                    // 3
	layoutVertical                   // 4
)

type tableLayout struct {
	kind    layoutKind
	grid    []int // the columns of the grid, in header order (layoutGrid: all)
	details []int // layoutDetails: the others, in header order
}

// NewTable returns a table whose lines start with indent, with these column headers.
func NewTable(indent string, header ...string) *Table { return &Table{indent: indent, header: header} }

// NewVerticalTable is NewTable for a table that goes vertical as soon as it does not fit.
func NewVerticalTable(indent string, header ...string) *Table {
	t := NewTable(indent, header...)
	t.vertical = true
	return t
}

// Demote names the columns that leave the grid first when it does not fit (layout 3).
func (t *Table) Demote(names ...string) *Table {
	for _, n := range names {
		if i := slices.Index(t.header, n); i >= 0 {
			t.demoted = append(t.demoted, i)
		}
	}
	return t
}

// Add adds a row.
func (t *Table) Add(cells ...string) { t.rows = append(t.rows, cells) }

// Len is the number of rows added since the last Write.
func (t *Table) Len() int { return len(t.rows) }

// Write renders the rows added since the last write, to fit width (0: no limit); the header
// goes with the first write only.
func (t *Table) Write(w io.Writer, width int) error {
	first := t.layout == nil
	if first {
		t.layout = t.decide(width)
	}
	var b strings.Builder
	switch t.layout.kind {
	case layoutVertical:
		t.writeVertical(&b, width)
	default:
		g := t.layout.grid
		widths := t.fitColumns(g, width)
		if first {
			t.gridLine(&b, pick(t.header, g), widths)
		}
		for _, r := range t.rows {
			t.gridLine(&b, pick(r, g), widths)
			t.writeDetails(&b, r, width)
		}
	}
	t.rows = t.rows[:0]
	_, err := io.WriteString(w, b.String())
	return err
}

// pick returns the cells of the columns cols ("-" for a missing one).
func pick(cells []string, cols []int) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = "-"
		if c < len(cells) {
			out[i] = cells[c]
		}
	}
	return out
}

// decide picks the layout for the rows at hand.
func (t *Table) decide(width int) *tableLayout {
	all := make([]int, len(t.header))
	for i := range all {
		all[i] = i
	}
	if width <= 0 || t.span(t.natural(all)) <= width || t.span(t.minimal(all)) <= width {
		return &tableLayout{kind: layoutGrid, grid: all}
	}
	if !t.vertical {
		// Columns leave the grid one at a time: the demoted ones, then from the last.
		order := slices.Clone(t.demoted)
		for i := len(all) - 1; i >= 0; i-- {
			if !slices.Contains(order, i) {
				order = append(order, i)
			}
		}
		split := func(n int) (grid, details []int) {
			for _, i := range all {
				if slices.Contains(order[:n], i) {
					details = append(details, i)
				} else {
					grid = append(grid, i)
				}
			}
			return grid, details
		}
		// A grid whose cells need not wrap, else one whose cells wrap.
		for _, widths := range []func([]int) []int{t.natural, t.minimal} {
			for n := 1; n <= len(all)-2; n++ {
				if grid, details := split(n); t.span(widths(grid)) <= width {
					return &tableLayout{kind: layoutDetails, grid: grid, details: details}
				}
			}
		}
	}
	return &tableLayout{kind: layoutVertical}
}

// natural returns the widths of the columns cols with every cell on one line.
func (t *Table) natural(cols []int) []int {
	w := make([]int, len(cols))
	measure := func(cells []string) {
		for i, c := range pick(cells, cols) {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	measure(t.header)
	for _, r := range t.rows {
		measure(r)
	}
	return w
}

// minimal returns the narrowest the columns cols can be: their header, and their longest word
// or list element.
func (t *Table) minimal(cols []int) []int {
	w := make([]int, len(cols))
	for i, h := range pick(t.header, cols) {
		w[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range pick(r, cols) {
			w[i] = max(w[i], longestWord(c))
		}
	}
	return w
}

// longestWord is the longest piece of s between spaces and after "," or ";".
func longestWord(s string) int {
	longest, cur := 0, 0
	for _, r := range s {
		switch r {
		case ' ':
			cur = 0
			continue
		case ',', ';':
			longest = max(longest, cur+1)
			cur = 0
			continue
		}
		cur++
		longest = max(longest, cur)
	}
	return longest
}

// span is the width of a line of columns this wide.
func (t *Table) span(widths []int) int {
	s := utf8.RuneCountInString(t.indent)
	for i, w := range widths {
		if i > 0 {
			s += 2
		}
		s += w
	}
	return s
}

// fitColumns returns the widths of the columns cols for the rows at hand: their natural widths,
// narrowed one character at a time (never below their minimum) until the line fits width, each
// time in the column where the fewest cells then wrap (the widest on a tie), so that a few long
// values wrap rather than every row.
func (t *Table) fitColumns(cols []int, width int) []int {
	widths := t.natural(cols)
	if width <= 0 || t.span(widths) <= width {
		return widths
	}
	mins := t.minimal(cols)
	lens := make([][]int, len(cols)) // each column's cell widths, sorted
	for _, r := range t.rows {
		for i, c := range pick(r, cols) {
			lens[i] = append(lens[i], utf8.RuneCountInString(c))
		}
	}
	for i := range lens {
		slices.Sort(lens[i])
	}
	wrapping := func(i, w int) int { // cells of column i longer than w
		n, _ := slices.BinarySearch(lens[i], w+1)
		return len(lens[i]) - n
	}
	for excess := t.span(widths) - width; excess > 0; excess-- {
		best := -1
		for i := range widths {
			if widths[i] <= mins[i] {
				continue
			}
			if best < 0 || wrapping(i, widths[i]-1) < wrapping(best, widths[best]-1) ||
				wrapping(i, widths[i]-1) == wrapping(best, widths[best]-1) && widths[i] > widths[best] {
				best = i
			}
		}
		if best < 0 {
			break // the minimum does not fit either: the lines run over (a later block's long word)
		}
		widths[best]--
	}
	return widths
}

// gridLine writes one row: cells wider than their column wrap onto more lines; the last column
// is not padded.
func (t *Table) gridLine(b *strings.Builder, cells []string, widths []int) {
	wrapped := make([][]string, len(cells))
	height := 1
	for i, c := range cells {
		wrapped[i] = []string{c}
		if utf8.RuneCountInString(c) > widths[i] {
			wrapped[i] = Wrap(c, widths[i], "")
		}
		height = max(height, len(wrapped[i]))
	}
	for l := 0; l < height; l++ {
		var line strings.Builder
		line.WriteString(t.indent)
		for i := range cells {
			c := ""
			if l < len(wrapped[i]) {
				c = wrapped[i][l]
			}
			line.WriteString(c)
			if i < len(cells)-1 {
				line.WriteString(strings.Repeat(" ", max(widths[i]-utf8.RuneCountInString(c), 0)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}

// writeDetails writes the cells of row r outside the grid as "LABEL value" pairs under it.
func (t *Table) writeDetails(b *strings.Builder, r []string, width int) {
	var pairs []string
	for _, i := range t.layout.details {
		if i < len(r) && r[i] != "" && r[i] != "-" {
			pairs = append(pairs, t.header[i]+" "+r[i])
		}
	}
	if len(pairs) == 0 {
		return
	}
	indent := t.indent + "    "
	for _, l := range Wrap(strings.Join(pairs, "  "), width-utf8.RuneCountInString(indent), "  ") {
		b.WriteString(indent + l + "\n")
	}
}

// writeVertical writes each row as a block of "LABEL  value" lines, values wrapped; empty
// cells ("-") are left out but for the first, which starts the block.
func (t *Table) writeVertical(b *strings.Builder, width int) {
	shown := func(r []string, i int) bool { return i == 0 || i < len(r) && r[i] != "" && r[i] != "-" }
	label := 0
	for _, r := range t.rows {
		for i, h := range t.header {
			if shown(r, i) {
				label = max(label, utf8.RuneCountInString(h))
			}
		}
	}
	avail := 0 // no limit
	if width > 0 {
		avail = max(width-utf8.RuneCountInString(t.indent)-2-label-2, 8)
	}
	pad := strings.Repeat(" ", label+2)
	for _, r := range t.rows {
		mark := "- "
		for i, h := range t.header {
			if !shown(r, i) {
				continue
			}
			c := "-"
			if i < len(r) {
				c = r[i]
			}
			for j, l := range Wrap(c, avail, "") {
				b.WriteString(t.indent)
				b.WriteString(mark)
				if j == 0 {
					b.WriteString(h + strings.Repeat(" ", label-utf8.RuneCountInString(h)+2))
				} else {
					b.WriteString(pad)
				}
				b.WriteString(l)
				b.WriteByte('\n')
				mark = "  "
			}
		}
	}
}
