package termtext

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// FitWriter passes lines through to W and wraps those longer than Width (tables lay
// themselves out to fit; this catches prose: headers, summaries, timeline events), at field
// boundaries (two spaces) first, then at words, list separators, and last anywhere, with
// continuation lines indented four spaces more than the line. Width 0 passes everything
// through (replay's --wide, or raw output: JSON, CSV, decode's kafka-dump-log text, help).
//
// A partial last line is held until the next Write or Flush; a chunk with a carriage return (a
// progress bar) passes through as it is.
type FitWriter struct {
	W       io.Writer
	Width   int
	partial []byte
	out     []byte
}

func (f *FitWriter) Write(p []byte) (int, error) {
	if f.Width <= 0 || bytes.IndexByte(p, '\r') >= 0 {
		if err := f.Flush(); err != nil {
			return 0, err
		}
		return f.W.Write(p)
	}
	n := len(p)
	f.out = f.out[:0]
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.partial = append(f.partial, p...)
			break
		}
		line := p[:i]
		if len(f.partial) > 0 {
			f.partial = append(f.partial, line...)
			line = f.partial
		}
		f.out = appendFitted(f.out, line, f.Width)
		f.partial = f.partial[:0]
		p = p[i+1:]
	}
	if len(f.out) > 0 {
		if _, err := f.W.Write(f.out); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Flush writes a held partial line (unwrapped: it may still grow).
func (f *FitWriter) Flush() error {
	if len(f.partial) == 0 {
		return nil
	}
	_, err := f.W.Write(f.partial)
	f.partial = f.partial[:0]
	return err
}

// appendFitted appends line (without its newline) to out, wrapped to width, each piece ending
// in a newline.
func appendFitted(out, line []byte, width int) []byte {
	if utf8.RuneCount(line) <= width {
		out = append(out, line...)
		return append(out, '\n')
	}
	s := string(line)
	lead := len(s) - len(strings.TrimLeft(s, " "))
	for _, l := range Wrap(s, width, strings.Repeat(" ", lead+4)) {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return out
}

// Wrap breaks s into lines of at most width runes; the first keeps s's indentation, every
// line after it starts with cont. It breaks where a reader expects it: at a run of two spaces
// (between fields or columns), else at a space, else after a list or path separator (",", ";",
// "/"), else after a dash (a member id longer than the line), and only then anywhere.
func Wrap(s string, width int, cont string) []string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var lines []string
	trimmed := strings.TrimLeft(s, " ")
	prefix := s[:len(s)-len(trimmed)]
	s = trimmed
	for {
		avail := width - utf8.RuneCountInString(prefix)
		if avail < 8 { // an indent that leaves no room: give it up
			prefix, avail = "", width
		}
		if utf8.RuneCountInString(s) <= avail {
			lines = append(lines, prefix+s)
			return lines
		}
		cut, next := breakAt(s, avail)
		lines = append(lines, prefix+strings.TrimRight(s[:cut], " "))
		s = strings.TrimLeft(s[next:], " ")
		prefix = cont
		if s == "" {
			return lines
		}
	}
}

// breakAt finds where to end a line of at most avail runes taken from the start of s (longer
// than avail): the byte index where the line ends and where the rest starts.
func breakAt(s string, avail int) (cut, next int) {
	end, n := len(s), 0 // end: the byte index just past the first avail runes
	for i := range s {
		if n == avail {
			end = i
			break
		}
		n++
	}
	// The line is s[:end] plus the rune at end when it is a space (breaking there costs nothing).
	window := s[:end]
	if end < len(s) && s[end] == ' ' {
		window = s[:end+1]
	}
	floor := len(window) / 3                               // a break this early wastes too much of the line...
	if i := strings.LastIndex(window, "  "); i > floor/2 { // ...but between fields, less does
		return i, i
	}
	if i := strings.LastIndexByte(window, ' '); i > floor {
		return i, i
	}
	if i := strings.LastIndexAny(s[:end], ",;/"); i > floor {
		return i + 1, i + 1
	}
	if i := strings.LastIndexByte(window, ' '); i > 0 {
		return i, i
	}
	if i := strings.LastIndexByte(s[:end], '-'); i > floor { // inside an id (a UUID, a client id)
		return i + 1, i + 1
	}
	return end, end
}

// wrapIndent is how far WriteWrapped indents continuation lines.
const wrapIndent = 4

// WriteWrapped writes prefix and text as one line, wrapped at spaces to width: continuation
// lines are indented by four spaces, or by prefix when prefix is only spaces (an indented
// block). A word longer than a line stays whole.
func WriteWrapped(w io.Writer, prefix, text string, width int) {
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
