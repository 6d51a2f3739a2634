package main

import (
	"io"
	"math"

	"github.com/coordlog/coordlog/internal/termtext"
)

// wrapWidth is the width text written to w wraps to: the width the command's stdout fits
// (output.go: the terminal's, $COLUMNS, or 80), no limit with --wide.
func wrapWidth(w io.Writer) int {
	if f, ok := w.(*termtext.FitWriter); ok {
		if f.Width <= 0 {
			return math.MaxInt
		}
		return f.Width
	}
	return outputWidth(w)
}
