package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// globals are the flags every command takes (root's persistent flags): how wide the output may
// be and how much goes to stderr.
type globals struct {
	wide    bool // --wide: no width limit, every table row on one line (the layout before fitting)
	quiet   bool // --quiet: no notes, progress or warnings on stderr
	verbose bool // --verbose: every skipped batch on its own line instead of a count per file
}

// defaultWidth is the width output fits when stdout is not a terminal and COLUMNS says nothing:
// the classic terminal's, so that a redirected or piped table reads the same in an 80-column
// terminal, an e-mail or an issue. --wide (or COLUMNS) lifts it.
const defaultWidth = 80

// outputWidth is the width output to w fits: the terminal's when w is one, else $COLUMNS when
// it is a positive number, else defaultWidth.
func outputWidth(w io.Writer) int {
	if n := askedWidth(w); n > 0 {
		return n
	}
	return defaultWidth
}

// notesWidth is the width stderr's notes and errors fit: the terminal's, or $COLUMNS; 0 (whole
// lines) when stderr is captured and COLUMNS says nothing, so that logs and the tests of every
// command can find a message on one line.
func notesWidth(w io.Writer) int { return askedWidth(w) }

// askedWidth is the terminal's width when w is one, else $COLUMNS when it is a positive
// number, else 0.
func askedWidth(w io.Writer) int {
	if f := terminalFile(w); f != nil {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		return c
	}
	return 0
}

// isTerminal reports whether w (a command's stdout or stderr, through the writers of this file)
// ends in a terminal.
func isTerminal(w io.Writer) bool { return terminalFile(w) != nil }

func terminalFile(w io.Writer) *os.File {
	for {
		switch v := w.(type) {
		case *stderrWriter:
			w = v.fit
		case *fitWriter:
			w = v.w
		case *os.File:
			if term.IsTerminal(int(v.Fd())) {
				return v
			}
			return nil
		default:
			return nil
		}
	}
}

// fitWriter is stdout for text output: it passes lines through and wraps those longer than
// width (tables lay themselves out to fit; this catches prose: headers, summaries, timeline
// events), at field boundaries (two spaces) first, then at words, list separators, and last
// anywhere, with continuation lines indented four spaces more than the line. width 0 (--wide,
// or raw output: JSON, CSV, decode's kafka-dump-log text, help) passes everything through.
//
// A partial last line is held until the next Write or Flush; a chunk with a carriage return (a
// progress bar) passes through as it is.
type fitWriter struct {
	w       io.Writer
	width   int
	partial []byte
	out     []byte
}

func (f *fitWriter) Write(p []byte) (int, error) {
	if f.width <= 0 || bytes.IndexByte(p, '\r') >= 0 {
		if err := f.Flush(); err != nil {
			return 0, err
		}
		return f.w.Write(p)
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
		f.out = appendFitted(f.out, line, f.width)
		f.partial = f.partial[:0]
		p = p[i+1:]
	}
	if len(f.out) > 0 {
		if _, err := f.w.Write(f.out); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Flush writes a held partial line (unwrapped: it may still grow).
func (f *fitWriter) Flush() error {
	if len(f.partial) == 0 {
		return nil
	}
	_, err := f.w.Write(f.partial)
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
	for _, l := range wrapText(s, width, strings.Repeat(" ", lead+4)) {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return out
}

// wrapText breaks s into lines of at most width runes; the first keeps s's indentation, every
// line after it starts with cont. It breaks where a reader expects it: at a run of two spaces
// (between fields or columns), else at a space, else after a list or path separator (",", ";",
// "/"), else after a dash (a member id longer than the line), and only then anywhere.
func wrapText(s string, width int, cont string) []string {
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

// stderrWriter is the commands' stderr. Notes (where a point fell, progress, ignored files,
// superseded batches) go through Write, which --quiet silences; what the user must see whatever
// the flags (damaged input, replay violations) goes to loud(w). Both wrap long lines to the
// terminal's width (notesWidth); verbatim(w) writes lines meant to be copied (a command line)
// as they are. Errors are printed by run, wrapped the same way.
type stderrWriter struct {
	fit *fitWriter // the real stderr
	g   *globals
}

func (s *stderrWriter) Write(p []byte) (int, error) {
	if s.g.quiet {
		return len(p), nil
	}
	return s.fit.Write(p)
}

// loud returns the writer under a command's stderr that --quiet does not silence.
func loud(w io.Writer) io.Writer {
	if s, ok := w.(*stderrWriter); ok {
		return s.fit
	}
	return w
}

// verbatim returns a command's stderr without the wrapping, for lines to copy and paste.
func verbatim(w io.Writer) io.Writer {
	if s, ok := w.(*stderrWriter); ok {
		return verbatimWriter{s}
	}
	return w
}

type verbatimWriter struct{ s *stderrWriter }

func (v verbatimWriter) Write(p []byte) (int, error) {
	if v.s.g.quiet {
		return len(p), nil
	}
	if err := v.s.fit.Flush(); err != nil {
		return 0, err
	}
	return v.s.fit.w.Write(p)
}

// verbose reports whether --verbose was given to the command writing its notes to w.
func verbose(w io.Writer) bool {
	s, ok := w.(*stderrWriter)
	return ok && s.g.verbose
}

// plural renders a count with its noun: "1 partition", "2 partitions". noun is the singular;
// irregular plurals are given as "singular/plural" ("batch/batches").
func plural(n int64, noun string) string {
	one, many, ok := strings.Cut(noun, "/")
	if !ok {
		many = one + "s"
	}
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// widthOf is the width a command's text output to stdout fits (0: no limit).
func widthOf(stdout io.Writer) int {
	if f, ok := stdout.(*fitWriter); ok {
		return f.width
	}
	return 0
}

// pluralWord picks the singular or plural form for a count: "is"/"are", "was"/"were".
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
