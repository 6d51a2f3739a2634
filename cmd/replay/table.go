package main

import (
	"io"
	"strings"
)

// table is a block of aligned columns: a header and rows of cells, rendered in one place so that
// fitting tables to the terminal's width is one change (two spaces between columns, as the
// other tables print). Cells must not hold tabs or line breaks.
type table struct {
	indent string
	header []string
	rows   [][]string
}

func newTable(indent string, header ...string) *table { return &table{indent: indent, header: header} }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) len() int { return len(t.rows) }

// write renders the table; the last column is not padded.
func (t *table) write(w io.Writer) error {
	widths := make([]int, len(t.header))
	measure := func(cells []string) {
		for i, c := range cells {
			if i < len(widths) {
				widths[i] = max(widths[i], len([]rune(c)))
			}
		}
	}
	measure(t.header)
	for _, r := range t.rows {
		measure(r)
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString(t.indent)
		for i, c := range cells {
			b.WriteString(c)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))+2))
			}
		}
		b.WriteByte('\n')
	}
	line(t.header)
	for _, r := range t.rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
