package report

import (
	"fmt"
	"slices"
	"strings"
)

// Aggregation: a plot has one pixel column per pixel of its width, and a row never draws
// more shapes than it has columns. Spans at least minSpanPx wide are drawn one by one (spans
// of one row do not overlap: rebalances end where the next begins, a member is in one state
// at a time); the narrower ones falling in one column are drawn as one shape per column that
// counts them by class. Points (committed offsets) are drawn one by one while a row has at
// most one point per pointSpacing columns; beyond that each column is drawn as the range of
// the values committed in it (min to max) and the last one, with one hover target per
// hoverColumns columns.

const (
	minSpanPx    = 2.0
	pointSpacing = 3
	hoverColumns = 4
)

// spanBucket is the narrow spans of one column.
type spanBucket struct {
	column  int
	count   int
	byClass map[string]int
	first   Span // the first span of the column (its record is the one linked)
	last    Span
}

// packSpans splits spans (sorted by start) into those drawn alone and per-column buckets of
// the narrow ones.
func packSpans(s scale, spans []Span) (alone []Span, buckets []*spanBucket) {
	var cur *spanBucket
	for _, sp := range spans {
		if s.x(sp.End)-s.x(sp.Start) >= minSpanPx {
			alone = append(alone, sp)
			continue
		}
		c := s.column(sp.Start)
		if cur == nil || cur.column != c {
			cur = &spanBucket{column: c, byClass: map[string]int{}, first: sp}
			buckets = append(buckets, cur)
		}
		cur.count++
		cur.byClass[sp.Class]++
		cur.last = sp
	}
	// A bucket of one span is that span, drawn at its minimum width.
	out := buckets[:0]
	for _, b := range buckets {
		if b.count == 1 {
			alone = append(alone, b.first)
			continue
		}
		out = append(out, b)
	}
	slices.SortStableFunc(alone, func(a, b Span) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	return alone, out
}

// class is the bucket's most frequent class (ties: the first by name), so that a column of
// mostly converged rebalances looks converged and a column with any open one is told by
// its hover text.
func (b *spanBucket) class() string {
	best, n := "", 0
	for c, k := range b.byClass {
		if k > n || k == n && c < best {
			best, n = c, k
		}
	}
	return best
}

// describe says what a bucket holds, for its hover text: "37 rebalances (30 converged,
// 7 superseded)".
func (b *spanBucket) describe(what string, unit AxisUnit) string {
	var parts []string
	keys := make([]string, 0, len(b.byClass))
	for c := range b.byClass {
		keys = append(keys, c)
	}
	slices.Sort(keys)
	for _, c := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", b.byClass[c], c))
	}
	return fmt.Sprintf("%d %s in this column (%s), %s to %s; records %s to %s",
		b.count, what, strings.Join(parts, ", "), formatX(unit, b.first.Start), formatX(unit, b.last.End),
		b.first.Src.where(), b.last.Src.where())
}

// pointColumn is the committed offsets of one pixel column of a series.
type pointColumn struct {
	column     int
	count      int
	min, max   int64
	first      Point
	last       Point
	rewinds    int
	whileEmpty int
}

// packPoints groups points (sorted by X) by pixel column.
func packPoints(s scale, pts []Point) []*pointColumn {
	var out []*pointColumn
	var cur *pointColumn
	for _, p := range pts {
		c := s.column(p.X)
		if cur == nil || cur.column != c {
			cur = &pointColumn{column: c, min: p.Value, max: p.Value, first: p}
			out = append(out, cur)
		}
		cur.count++
		cur.min, cur.max = min(cur.min, p.Value), max(cur.max, p.Value)
		cur.last = p
		if p.Flags&PointRewind != 0 {
			cur.rewinds++
		}
		if p.Flags&PointWhileEmpty != 0 {
			cur.whileEmpty++
		}
	}
	return out
}
