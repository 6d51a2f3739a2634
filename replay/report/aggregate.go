package report

import (
	"fmt"
	"slices"
	"strings"
)

// Aggregation: a plot has one pixel column per pixel of its width, and a row never draws
// more shapes than it has columns. Spans at least minSpanPx wide are drawn one by one (spans
// of one row do not overlap: rebalances end where the next begins, a member is in one state
// at a time); the narrower ones falling in one bucket of bucketPx columns are drawn as one
// shape that counts them by class; so are the epoch steps of one bucket. An offsets row's
// line goes through every commit while the row has at most one per pointSpacing columns;
// beyond that each column is drawn as the range of the values committed in it (min to max)
// and the last one. Hover texts are what makes a page heavy: an offsets chart has at most
// hoverBudget of them, shared by its rows; a row that has at most its share of commits
// (and at most maxPointMarks) gives each commit a marker and a hover text, a row with more
// gives them to its rewinds and deletions and shares the rest among runs of columns.

const (
	minSpanPx     = 2.0
	bucketPx      = 2
	pointSpacing  = 3
	maxPointMarks = 48
	hoverBudget   = 300
)

// bucket is v's bucket of bucketPx columns.
func (s scale) bucket(v int64) int { return s.column(v) / bucketPx }

// spanBucket is the narrow spans of one bucket of columns.
type spanBucket struct {
	bucket  int
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
		c := s.bucket(sp.Start)
		if cur == nil || cur.bucket != c {
			cur = &spanBucket{bucket: c, byClass: map[string]int{}, first: sp}
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

// class is the bucket's most frequent class (ties: the first by name), so that a bucket of
// mostly converged rebalances looks converged; its hover text tells the others.
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
	return fmt.Sprintf("%d %s here (%s), %s to %s; records %s to %s",
		b.count, what, strings.Join(parts, ", "), formatX(unit, b.first.Start), formatX(unit, b.last.End),
		b.first.Src.where(), b.last.Src.where())
}

// pointColumn is the committed offsets of one pixel column of a series.
type pointColumn struct {
	column   int
	count    int
	min, max int64
	first    Point
	last     Point
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
	}
	return out
}
