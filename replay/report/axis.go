package report

import (
	"math"
	"strconv"
	"time"
)

// scale maps an axis onto the plot's pixel columns.
type scale struct {
	axis  Axis
	x0    float64 // the plot's left edge, in pixels
	width float64 // the plot's width in pixels: one column per pixel
}

// newScale returns the scale of a, widened to 1 s (or 1 offset) around a single instant so
// that something that happened at one time is drawn in the middle rather than nowhere.
func newScale(a Axis, x0, width float64) scale {
	if a.End <= a.Start {
		pad := int64(500)
		if a.Unit == UnitOffset {
			pad = 1
		}
		a.Start, a.End = a.Start-pad, a.End+pad
	}
	return scale{axis: a, x0: x0, width: width}
}

// x is v's position in pixels, clamped to the plot.
func (s scale) x(v int64) float64 {
	f := float64(v-s.axis.Start) / float64(s.axis.End-s.axis.Start)
	return s.x0 + s.width*math.Min(1, math.Max(0, f))
}

// column is v's pixel column, 0 to width-1.
func (s scale) column(v int64) int {
	c := int(s.x(v) - s.x0)
	if c >= int(s.width) {
		c = int(s.width) - 1
	}
	return c
}

// tick is a labelled position on the axis.
type tick struct {
	X     float64
	Label string
	// Class aligns the label: "tick" centred, "tick tick-start" or "tick tick-end" near the
	// plot's edges, so that it stays inside the plot.
	Class string
}

// tickAt is a tick at x, aligned to stay inside the plot.
func (s scale) tickAt(x float64, label string) tick {
	class := "tick"
	switch {
	case x-s.x0 < 36:
		class = "tick tick-start"
	case s.x0+s.width-x < 36:
		class = "tick tick-end"
	}
	return tick{X: x, Label: label, Class: class}
}

// niceSteps are the tick intervals of a time axis, in milliseconds.
var niceSteps = []int64{
	1, 2, 5, 10, 20, 50, 100, 200, 500,
	1_000, 2_000, 5_000, 10_000, 15_000, 30_000,
	60_000, 2 * 60_000, 5 * 60_000, 10 * 60_000, 15 * 60_000, 30 * 60_000,
	3_600_000, 2 * 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000,
	86_400_000, 2 * 86_400_000, 7 * 86_400_000, 14 * 86_400_000, 30 * 86_400_000, 91 * 86_400_000, 365 * 86_400_000,
}

// ticks returns at most about max ticks at a round interval, labelled as precisely as the
// interval needs ("19:05:54.200", "19:06", "2026-11-30").
func (s scale) ticks(max int) []tick {
	span := s.axis.End - s.axis.Start
	if s.axis.Unit == UnitOffset {
		step := niceOffsetStep(span, max)
		var out []tick
		for v := ceilTo(s.axis.Start, step); v <= s.axis.End; v += step {
			out = append(out, s.tickAt(s.x(v), strconv.FormatInt(v, 10)))
		}
		return out
	}
	step := niceSteps[len(niceSteps)-1]
	for _, st := range niceSteps {
		if span/st <= int64(max) {
			step = st
			break
		}
	}
	layout := "15:04:05.000"
	switch {
	case step >= 86_400_000:
		layout = "2006-01-02"
	case step >= 60_000:
		layout = "15:04"
	case step >= 1_000:
		layout = "15:04:05"
	}
	var out []tick
	for v := ceilTo(s.axis.Start, step); v <= s.axis.End; v += step {
		t := time.UnixMilli(v).UTC()
		label := t.Format(layout)
		if layout == "15:04" && t.Hour() == 0 && t.Minute() == 0 {
			label = t.Format("Jan 2")
		}
		out = append(out, s.tickAt(s.x(v), label))
	}
	return out
}

// niceOffsetStep is a 1-2-5 step giving at most max ticks over span offsets.
func niceOffsetStep(span int64, max int) int64 {
	for step := int64(1); ; step *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if span/(step*m) <= int64(max) {
				return step * m
			}
		}
		if step > math.MaxInt64/100 {
			return step
		}
	}
}

// ceilTo rounds v up to a multiple of step.
func ceilTo(v, step int64) int64 {
	r := v % step
	switch {
	case r == 0:
		return v
	case r < 0:
		return v - r
	}
	return v - r + step
}

// formatX renders a position on the axis for hover texts: a UTC time with milliseconds, or
// an offset.
func formatX(unit AxisUnit, v int64) string {
	if unit == UnitOffset {
		return "offset " + strconv.FormatInt(v, 10)
	}
	return formatTime(v)
}

// formatTime renders Unix milliseconds as UTC ("2026-11-29 19:05:53.602"), "-" for none.
func formatTime(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000")
}

// formatDuration renders milliseconds the way the timeline does: "585 ms", "2.997 s", "3m12s".
func formatDuration(ms int64) string {
	switch {
	case ms < 0:
		return "-"
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + " ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + " s"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}
