package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// wrapDefaultWidth is the width timeline and check wrap their text to when stdout is not a
// terminal and COLUMNS says nothing: the classic terminal's.
const wrapDefaultWidth = 80

// wrapWidth is the width text to w wraps to: the terminal's when w is one, else $COLUMNS when
// it is a positive number, else wrapDefaultWidth.
func wrapWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		return c
	}
	return wrapDefaultWidth
}

// wrapIndent is how far continuation lines are indented.
const wrapIndent = 4

// writeWrapped writes prefix and text as one line, wrapped at spaces to width: continuation
// lines are indented by wrapIndent, or by prefix when prefix is only spaces (an indented
// block). A word longer than a line stays whole.
func writeWrapped(w io.Writer, prefix, text string, width int) {
	var b strings.Builder
	indent := strings.Repeat(" ", wrapIndent)
	if strings.TrimLeft(prefix, " ") == "" && prefix != "" {
		indent = prefix
	}
	line := prefix
	col := utf8.RuneCountInString(prefix)
	first := true
	for _, word := range strings.Split(text, " ") {
		n := utf8.RuneCountInString(word)
		sep := 1
		if first {
			sep = 0
		}
		if !first && col+sep+n > width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line, col, sep = indent, len(indent), 0
		}
		if sep == 1 {
			line += " "
		}
		line += word
		col += sep + n
		first = false
	}
	b.WriteString(line + "\n")
	io.WriteString(w, b.String())
}

// countOf says n things: "1 partition", "3 partitions".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
