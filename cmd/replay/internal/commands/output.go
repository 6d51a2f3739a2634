package commands

import (
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/coordlog/coordlog/internal/termtext"
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
		case *termtext.FitWriter:
			w = v.W
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

// stderrWriter is the commands' stderr. Notes (where a point fell, progress, ignored files,
// superseded batches) go through Write, which --quiet silences; what the user must see whatever
// the flags (damaged input, replay violations) goes to loud(w). Both wrap long lines to the
// terminal's width (notesWidth); verbatim(w) writes lines meant to be copied (a command line)
// as they are. Errors are printed by run, wrapped the same way.
type stderrWriter struct {
	fit *termtext.FitWriter // the real stderr
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
	return v.s.fit.W.Write(p)
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
	if f, ok := stdout.(*termtext.FitWriter); ok {
		return f.Width
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

// wrapWidth is the width text written to w wraps to: the width the command's stdout fits
// (the terminal's, $COLUMNS, or 80), no limit with --wide.
func wrapWidth(w io.Writer) int {
	if f, ok := w.(*termtext.FitWriter); ok {
		if f.Width <= 0 {
			return math.MaxInt
		}
		return f.Width
	}
	return outputWidth(w)
}
