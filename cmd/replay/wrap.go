package main

import (
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// wrapWidth is the width text written to w wraps to: the width the command's stdout fits
// (output.go: the terminal's, $COLUMNS, or 80), no limit with --wide.
func wrapWidth(w io.Writer) int {
	if f, ok := w.(*fitWriter); ok {
		if f.width <= 0 {
			return math.MaxInt
		}
		return f.width
	}
	return outputWidth(w)
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
