package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The layout turns the picture model into shapes at pixel positions; the template only
// prints them (escaping every text, since group ids, client ids and hosts come from the log).

// Geometry of a block (one SVG): the gutter holds the rows' labels, the plot one pixel column
// per column of aggregation.
const (
	svgWidth   = 1200.0
	gutter     = 216.0
	plotWidth  = 944.0
	axisHeight = 22.0 // tick labels above a block's first row
	maxTicks   = 8
	labelChars = 30 // a row label's longest text; the full text is its hover title
	// maxRebalanceRows bounds a group's table of rebalances (all are drawn).
	maxRebalanceRows = 300
)

// Rows' heights.
const (
	epochRow   = 20.0
	laneRow    = 18.0
	assignRow  = 14.0
	seriesRow  = 34.0
	txnRow     = 16.0
	rowPadding = 3.0
)

// pageView is what the template prints.
type pageView struct {
	Title    string
	Input    string
	Facts    []string
	Notes    []string
	Overview []overviewRow
	Groups   []groupView
	Legend   []legendItem
}

type overviewRow struct {
	Anchor, ID, Type, State string
	Partition               int32
	Members                 int
	Rebalances              int
	LastActivity            string
	Findings                []chip
	Drawn                   bool
}

// chip is a small labelled badge (a finding, a group type).
type chip struct{ Class, Text, Title string }

type legendItem struct{ Class, Text string }

type groupView struct {
	Anchor, ID, Type, State string
	Summary                 string
	Chips                   []chip
	Notes                   []string
	Blocks                  []block
	Rebalances              []rebalanceRow
	MoreRebalances          string
	Records                 []recordRow
	Unlisted                string
}

// block is one SVG: a titled chart with the shared time axis.
type block struct {
	Title  string
	Note   string
	Height float64
	Ticks  []tick
	Labels []rowLabel
	Shapes []shape
	// Mark is the block's data-block attribute (tests count shapes per block).
	Mark string
	// packed counts the spans (and epoch steps) drawn several to a shape.
	packed int
}

// packedNote is the note of a block some of whose spans were drawn several to a shape.
func (b *block) packedNote() {
	if b.packed > 0 && b.Note == "" {
		b.Note = fmt.Sprintf("%s marks narrower than %d pixels are drawn together, one shape per %d pixel columns with the count of each kind; hover one for what it holds",
			thousands(b.packed), int(minSpanPx), bucketPx)
	}
}

// rowLabel is a row's name in the gutter.
type rowLabel struct {
	Y           float64
	Text, Title string
	Class       string
}

// shape is one drawn thing. Kind selects the SVG element: rect, path, line, circle, text,
// poly (a polygon of Points).
type shape struct {
	Kind       string
	X, Y, W, H float64
	D          string
	Class      string
	Title      string
	Href       string
	Label      string
	// Mark and Count are the data-mark and data-count attributes: what the shape stands for
	// and how many of them (an aggregated column stands for several).
	Mark  string
	Count int
}

type rebalanceRow struct {
	Epoch, Start, Duration, Outcome, Causes, Moves string
	Href                                           string
	Class                                          string
}

type recordRow struct {
	ID                               string
	Time, Where, Records, Kind, Text string
	Marks                            []string
}

// where is the record's position as the timeline prints it: "p0:35", "p0:35-40".
func (s Src) where() string {
	if s.LastOffset > s.Offset {
		return fmt.Sprintf("p%d:%d-%d", s.Partition, s.Offset, s.LastOffset)
	}
	return fmt.Sprintf("p%d:%d", s.Partition, s.Offset)
}

// describe is the hover text's last line: where the records are, when, and what they are.
func (s Src) describe() string {
	var b strings.Builder
	b.WriteString("record ")
	if s.LastOffset > s.Offset {
		b.WriteString("s ")
	}
	fmt.Fprintf(&b, "partition %d offset %d", s.Partition, s.Offset)
	if s.LastOffset > s.Offset {
		fmt.Fprintf(&b, "-%d", s.LastOffset)
	}
	b.WriteString(", ")
	b.WriteString(formatTime(s.Time))
	if s.Records != "" {
		b.WriteString(", ")
		b.WriteString(s.Records)
	}
	if s.Kind != "" {
		b.WriteString(" (")
		b.WriteString(s.Kind)
		b.WriteString(")")
	}
	return strings.Replace(b.String(), "record s ", "records ", 1)
}

func (g *Group) href(row int) string {
	if row < 0 || row >= len(g.Records) {
		return ""
	}
	return "#" + g.rowID(row)
}

func (g *Group) rowID(row int) string { return g.Anchor + "-r" + strconv.Itoa(row) }

// layoutPage lays out every drawn group.
func layoutPage(p *Page) pageView {
	v := pageView{Title: p.Title, Input: p.Input, Notes: p.Notes, Legend: legend}
	parts := make([]string, len(p.Partitions))
	for i, n := range p.Partitions {
		parts[i] = strconv.Itoa(int(n))
	}
	v.Facts = append(v.Facts, fmt.Sprintf("%s records in %d partition(s) (%s), %s; %s group(s), %s drawn",
		thousands(int(p.Records)), len(p.Partitions), strings.Join(parts, ", "), p.Rules, thousands(len(p.Overview)), thousands(len(p.Groups))))
	if p.Window != "" {
		v.Facts = append(v.Facts, "drawn: "+p.Window)
	}
	for _, g := range p.Overview {
		v.Overview = append(v.Overview, overviewRow{
			Anchor: g.Anchor, ID: g.ID, Type: g.Type, State: g.State, Partition: g.Partition, Members: g.Members,
			Rebalances: g.Counts.Rebalances, LastActivity: formatTime(g.LastActivity.Time), Findings: findingChips(g.Counts),
			Drawn: g.Drawn,
		})
	}
	for _, g := range p.Groups {
		v.Groups = append(v.Groups, layoutGroup(g))
	}
	return v
}

// legend explains the classes of the member lanes and spans.
var legend = []legendItem{
	{"st-joined", "joined (no assignment yet)"}, {"st-stable", "stable"}, {"st-reconciling", "reconciling (waiting for partitions)"},
	{"st-revoking", "revoking"}, {"st-away", "away (static member, epoch -2)"},
	{"rb-converged", "rebalance converged (a classic one: completed)"}, {"rb-superseded", "rebalance superseded"},
	{"rb-open", "rebalance still open"}, {"rb-group-converted", "rebalance ended by a conversion or deletion"},
	{"tx-committed", "transaction committed"}, {"tx-aborted", "transaction aborted"}, {"tx-open", "transaction open"},
	{"pt-rewind", "offset moved back"},
}

func findingChips(c Counts) []chip {
	var out []chip
	add := func(n int, class, one, many, title string) {
		if n == 0 {
			return
		}
		text := one
		if n > 1 {
			text = many
		}
		out = append(out, chip{Class: class, Text: fmt.Sprintf("%d %s", n, text), Title: title})
	}
	add(c.Rewinds, "bad", "rewind", "rewinds", "committed offsets that moved back")
	add(c.WhileEmpty, "warn", "commit while empty", "commits while empty", "offsets written while the group had no members: an admin tool or a standalone consumer")
	add(c.Fenced, "bad", "fenced", "fenced", "members removed by a session or rebalance timeout")
	add(c.Stuck, "bad", "stuck rebalance", "stuck rebalances", "rebalances still open at the end of the log or slower than the threshold")
	add(c.OpenTxns, "bad", "open transaction", "open transactions", "transactions without a marker at the end of the log")
	add(c.Aborted, "warn", "aborted transaction", "aborted transactions", "transactions that ended in abort")
	add(c.Deletions, "info", "offset deleted", "offsets deleted", "committed offsets deleted")
	add(c.Violations, "bad", "violation", "violations", "records the replay refused")
	return out
}

func layoutGroup(g *Group) groupView {
	v := groupView{Anchor: g.Anchor, ID: g.ID, Type: g.Type, State: g.State, Chips: findingChips(g.Counts), Notes: g.Notes}
	v.Summary = fmt.Sprintf("partition %d, %d member(s) at the end, %d rebalance(s), %d event(s), %s to %s",
		g.Partition, g.Members, g.Counts.Rebalances, g.Counts.Events, formatX(g.Axis.Unit, g.Axis.Start), formatX(g.Axis.Unit, g.Axis.End))
	if g.Axis.ClippedStart {
		v.Summary += " (from the window's start: what was open then is drawn from there)"
	}
	s := newScale(g.Axis, gutter, plotWidth)
	v.Blocks = append(v.Blocks, layoutHistory(g, s))
	if len(g.Assignment) > 0 {
		v.Blocks = append(v.Blocks, layoutAssignment(g, s))
	}
	if len(g.Offsets) > 0 {
		v.Blocks = append(v.Blocks, layoutOffsets(g, s))
	}
	if len(g.Transactions) > 0 {
		v.Blocks = append(v.Blocks, layoutTransactions(g, s))
	}
	for i, r := range g.Rebalances {
		if i == maxRebalanceRows {
			v.MoreRebalances = fmt.Sprintf("%s more rebalances are drawn but not listed: replay timeline --summary lists them all", thousands(len(g.Rebalances)-i))
			break
		}
		v.Rebalances = append(v.Rebalances, rebalanceRow{Epoch: r.Label, Start: formatX(g.Axis.Unit, r.Start),
			Duration: spanDuration(g.Axis.Unit, r), Outcome: r.Class, Causes: r.Text, Href: g.href(r.Src.Row), Class: "rb-" + r.Class})
	}
	for i, r := range g.Records {
		v.Records = append(v.Records, recordRow{ID: g.rowID(i), Time: formatTime(r.Src.Time), Where: r.Src.where(),
			Records: r.Src.Records, Kind: r.Src.Kind, Text: r.Text, Marks: r.Marks})
	}
	if g.Unlisted > 0 {
		v.Unlisted = fmt.Sprintf("%s more event(s) of this group are not listed here (the list keeps rebalances, members, "+
			"marked events and transactions first): replay timeline --group with --since/--until prints them all", thousands(g.Unlisted))
	}
	return v
}

func spanDuration(unit AxisUnit, r Span) string {
	if r.Open {
		return "open"
	}
	if unit == UnitOffset {
		return fmt.Sprintf("%d records", r.End-r.Start)
	}
	return formatDuration(r.End - r.Start)
}

// newBlock starts a block with the axis ticks, and the date (UTC) in the gutter.
func newBlock(title, mark string, s scale) block {
	b := block{Title: title, Mark: mark, Ticks: s.ticks(maxTicks)}
	if s.axis.Unit == UnitTime {
		b.Shapes = append(b.Shapes, shape{Kind: "text", X: gutter - 10, Y: 12, Class: "axis-date", Label: "UTC " + formatTime(s.axis.Start)[:10]})
	} else {
		b.Shapes = append(b.Shapes, shape{Kind: "text", X: gutter - 10, Y: 12, Class: "axis-date", Label: "record offsets"})
	}
	return b
}

// label adds a row label, shortened to labelChars with the full text as its title.
func (b *block) label(y float64, text, title, class string) {
	if title == "" {
		title = text
	}
	text = shorten(text, labelChars)
	b.Labels = append(b.Labels, rowLabel{Y: y, Text: text, Title: title, Class: class})
}

// spans draws a row of spans between y and y+h, aggregating the narrow ones.
func (b *block) spans(g *Group, s scale, spans []Span, y, h float64, prefix, mark, what string) {
	alone, buckets := packSpans(s, spans)
	for _, sp := range alone {
		x0, x1 := s.x(sp.Start), s.x(sp.End)
		w := max(x1-x0, minSpanPx)
		sh := shape{Kind: "rect", X: x0, Y: y, W: w, H: h, Class: prefix + sp.Class, Title: sp.Text + "\n" + sp.Src.describe(),
			Href: g.href(sp.Src.Row), Mark: mark, Count: 1}
		if sp.Label != "" && w > float64(len(sp.Label))*6+6 {
			sh.Label = sp.Label
		}
		b.Shapes = append(b.Shapes, sh)
	}
	for _, bk := range buckets {
		b.packed += bk.count
		b.Shapes = append(b.Shapes, shape{Kind: "rect", X: s.x0 + float64(bk.bucket*bucketPx), Y: y, W: bucketPx, H: h,
			Class: prefix + bk.class() + " agg", Title: bk.describe(what, g.Axis.Unit), Href: g.href(bk.first.Src.Row),
			Mark: mark, Count: bk.count})
	}
}

// layoutHistory is the group's epoch steps, rebalances, own marks and member lanes.
func layoutHistory(g *Group, s scale) block {
	b := newBlock("Rebalances and members", "history", s)
	y := axisHeight
	// The epoch row: a tick and the number at each step, numbers only where they fit.
	b.label(y+epochRow/2, epochName(g), "", "")
	lastLabel := -1e9
	for i := 0; i < len(g.Epochs); {
		// The steps of one bucket of columns are one tick.
		c := s.bucket(g.Epochs[i].X)
		j := i + 1
		for j < len(g.Epochs) && s.bucket(g.Epochs[j].X) == c {
			j++
		}
		first, last := g.Epochs[i], g.Epochs[j-1]
		x := s.x(first.X)
		title := fmt.Sprintf("%s %d from %s\n%s", epochName(g), first.Epoch, formatX(g.Axis.Unit, first.X), first.Src.describe())
		if j-i > 1 {
			b.packed += j - i
			x = s.x0 + float64(c*bucketPx)
			title = fmt.Sprintf("%d %s steps here, %d to %d, %s to %s; records %s to %s", j-i, epochName(g),
				first.Epoch, last.Epoch, formatX(g.Axis.Unit, first.X), formatX(g.Axis.Unit, last.X), first.Src.where(), last.Src.where())
		}
		b.Shapes = append(b.Shapes, shape{Kind: "line", X: x, Y: y + 2, W: 0, H: epochRow - 4, Class: "epoch-tick", Mark: "epoch", Count: j - i,
			Title: title, Href: g.href(first.Src.Row)})
		label := strconv.Itoa(int(last.Epoch))
		if x-lastLabel > float64(len(label))*6+4 {
			b.Shapes = append(b.Shapes, shape{Kind: "text", X: x + 2, Y: y + epochRow/2 + 4, Class: "epoch-num", Label: label})
			lastLabel = x
		}
		i = j
	}
	for _, m := range g.Marks {
		b.Shapes = append(b.Shapes, markShape(g, s, m, y+epochRow/2, "group"))
	}
	y += epochRow + rowPadding
	b.label(y+epochRow/2, "rebalances", fmt.Sprintf("%d rebalance(s): from the record that started each to the one that completed it", len(g.Rebalances)), "")
	b.spans(g, s, g.Rebalances, y+2, epochRow-4, "rb-", "rebalance", "rebalances")
	y += epochRow + rowPadding
	for _, l := range g.Lanes {
		title := l.Name
		if l.Detail != "" {
			title += "\n" + l.Detail
		}
		b.label(y+laneRow/2, l.Name, title, "lane-label")
		b.Shapes = append(b.Shapes, shape{Kind: "rect", X: gutter - 10, Y: y + 5, W: 7, H: laneRow - 10, Class: "c" + strconv.Itoa(l.Color%10), Mark: "lane", Count: 1, Title: title})
		b.spans(g, s, l.Segments, y+3, laneRow-6, "st-", "segment", "member states")
		for _, m := range l.Marks {
			b.Shapes = append(b.Shapes, markShape(g, s, m, y+laneRow/2, "member"))
		}
		y += laneRow
	}
	if len(g.Lanes) == 0 {
		b.label(y+laneRow/2, "no members", "the log shows no member of this group in the window", "muted")
		y += laneRow
	}
	b.Height = y + 4
	b.packedNote()
	return b
}

// epochName is what the group's epoch row counts: a classic group's generation, a modern
// group's epoch, both for a group converted between the two.
func epochName(g *Group) string {
	for _, m := range g.Marks {
		if m.Class == "converted" {
			return "generation / epoch"
		}
	}
	if g.Type == "classic" {
		return "generation"
	}
	return "group epoch"
}

// markShape draws a point event: a small symbol whose class says what it is.
func markShape(g *Group, s scale, m Mark, cy float64, mark string) shape {
	x := s.x(m.X)
	var d string
	switch m.Class {
	case "fenced", "violation", "deleted":
		d = fmt.Sprintf("M%s %sl8 8m0 -8l-8 8", num(x-4), num(cy-4)) // a cross
	case "left", "expired":
		d = fmt.Sprintf("M%s %sv12", num(x), num(cy-6)) // a bar
	case "joined", "created":
		d = fmt.Sprintf("M%s %sl5 4l-5 4z", num(x), num(cy-4)) // a triangle pointing forward
	default: // replaced, converted, updated, temporary-leave
		d = fmt.Sprintf("M%s %sl4 4l-4 4l-4 -4z", num(x), num(cy-4)) // a diamond
	}
	return shape{Kind: "path", D: d, Class: "mk-" + m.Class, Title: m.Text + "\n" + m.Src.describe(), Href: g.href(m.Src.Row), Mark: mark + "-" + m.Class, Count: 1}
}

// layoutAssignment is who was meant to own (thin bar above) and who owned (below) each
// topic-partition or task.
func layoutAssignment(g *Group, s scale) block {
	title := "Assignment: target (thin, above) and current (below) owner of each partition"
	if g.Type == "streams" {
		title = "Assignment: target (thin, above) and current (below) owner of each task"
	}
	b := newBlock(title, "assignment", s)
	y := axisHeight
	for _, r := range g.Assignment {
		b.label(y+assignRow/2, r.Label, "", "")
		owners := func(os []Owner, yy, h float64, what string) {
			var spans []Span
			for _, o := range os {
				name, color := "?", 0
				if o.Lane >= 0 && o.Lane < len(g.Lanes) {
					name, color = g.Lanes[o.Lane].Name, g.Lanes[o.Lane].Color
				}
				text := fmt.Sprintf("%s: %s %s from %s", r.Label, what, name, formatX(g.Axis.Unit, o.Start))
				if o.Open {
					text += " to the end"
				} else {
					text += " to " + formatX(g.Axis.Unit, o.End)
				}
				spans = append(spans, Span{Start: o.Start, End: o.End, Class: strconv.Itoa(color % 10), Text: text, Src: o.Src})
			}
			b.spans(g, s, spans, yy, h, "c", "owner-"+what, "owners")
		}
		owners(r.Target, y+1, 3, "target")
		owners(r.Current, y+5, assignRow-7, "current")
		y += assignRow
	}
	// Which color is which member.
	seen := map[int]bool{}
	for _, r := range g.Assignment {
		for _, os := range [][]Owner{r.Target, r.Current} {
			for _, o := range os {
				seen[o.Lane] = true
			}
		}
	}
	x := gutter
	y += 4
	b.label(y+6, "owners", "the members, by the color of their lane", "muted")
	for i, l := range g.Lanes {
		if !seen[i] {
			continue
		}
		name := shorten(l.Name, labelChars)
		w := 14 + 6.2*float64(len([]rune(name))) + 12
		if x+w > svgWidth {
			x, y = gutter, y+14
		}
		b.Shapes = append(b.Shapes, shape{Kind: "rect", X: x, Y: y + 1, W: 10, H: 10, Class: "c" + strconv.Itoa(l.Color%10), Title: l.Name + "\n" + l.Detail},
			shape{Kind: "text", X: x + 14, Y: y + 10, Class: "owner-name", Label: name})
		x += w
	}
	b.Height = y + 18
	b.packedNote()
	return b
}

// layoutOffsets draws each topic-partition's committed offset as a step line, scaled to the
// row, rewinds in red.
func layoutOffsets(g *Group, s scale) block {
	b := newBlock("Committed offsets (each row scaled to its own range)", "offsets", s)
	y := axisHeight
	aggregated := 0
	// The rows share the hover texts: each gets hoverBudget/rows, at least 16.
	share := max(16, hoverBudget/max(1, len(g.Offsets)))
	for _, sr := range g.Offsets {
		label := fmt.Sprintf("%s-%d", sr.Topic, sr.Partition)
		b.label(y+seriesRow/2, label, "", "")
		if b.series(g, s, sr, label, y+4, seriesRow-8, share) {
			aggregated++
		}
		y += seriesRow
	}
	if aggregated > 0 {
		b.Note = fmt.Sprintf("%d of %d rows have more commits than pixels: each pixel column shows the range of the offsets committed in it (min to max) and the line its last value; hover a column for its records", aggregated, len(g.Offsets))
	}
	b.Height = y + 4
	b.packedNote()
	return b
}

// series draws one topic-partition between y (its highest value) and y+h (its lowest), with
// at most about share hover texts; it reports whether the row's line was aggregated.
func (b *block) series(g *Group, s scale, sr *Series, label string, y, h float64, share int) bool {
	lo, hi, any := int64(0), int64(0), false
	for _, p := range sr.Points {
		if p.Flags&PointDeleted != 0 {
			continue
		}
		if !any || p.Value < lo {
			lo = p.Value
		}
		if !any || p.Value > hi {
			hi = p.Value
		}
		any = true
	}
	vy := func(v int64) float64 {
		if hi == lo {
			return y + h/2
		}
		return y + h - h*float64(v-lo)/float64(hi-lo)
	}
	end := s.x(g.Axis.End)
	if n := len(sr.Points); n > 0 {
		last := sr.Points[n-1]
		text := strconv.FormatInt(last.Value, 10)
		if last.Flags&PointDeleted != 0 {
			text = "deleted"
		}
		b.Shapes = append(b.Shapes, shape{Kind: "text", X: end + 3, Y: y + h/2 + 4, Class: "last-value", Label: text})
	}
	aggregated := len(sr.Points)*pointSpacing > int(s.width)

	// The line: a step line through every point, or through each column's last value when
	// aggregated; it stops where the offset was deleted. A rewind's drop is drawn in red.
	var line, drops strings.Builder
	pen, prev := false, int64(0)
	step := func(x float64, p Point) {
		if p.Flags&PointDeleted != 0 {
			if pen {
				fmt.Fprintf(&line, "H%s", num(x))
			}
			pen = false
			return
		}
		if pen && p.Value < prev {
			fmt.Fprintf(&drops, "M%s %sV%s", num(x), num(vy(prev)), num(vy(p.Value)))
		}
		if pen {
			fmt.Fprintf(&line, "H%sV%s", num(x), num(vy(p.Value)))
		} else {
			fmt.Fprintf(&line, "M%s %s", num(x), num(vy(p.Value)))
		}
		pen, prev = true, p.Value
	}
	cols := packPoints(s, sr.Points)
	if aggregated {
		for _, c := range cols {
			x := s.x0 + float64(c.column)
			if c.max > c.min {
				b.Shapes = append(b.Shapes, shape{Kind: "rect", X: x, Y: vy(c.max), W: 1, H: vy(c.min) - vy(c.max), Class: "range"})
			}
			step(x, c.last)
		}
	} else {
		for _, p := range sr.Points {
			step(s.x(p.X), p)
		}
	}
	if pen {
		fmt.Fprintf(&line, "H%s", num(end))
	}
	b.Shapes = append(b.Shapes, shape{Kind: "path", D: line.String(), Class: "offset-line"})
	if drops.Len() > 0 {
		b.Shapes = append(b.Shapes, shape{Kind: "path", D: drops.String(), Class: "rewind-line"})
	}

	// Markers with hover texts: every commit of a row with few, else every rewind and
	// deletion, plus one hover target per run of columns that have commits.
	detailed := len(sr.Points) <= min(maxPointMarks, share)
	hoverColumns := max(1, (int(s.width)+share-1)/share)
	var prevValue *int64
	for _, p := range sr.Points {
		if detailed || p.Flags&(PointRewind|PointDeleted) != 0 {
			class, mark := "pt", "commit"
			switch {
			case p.Flags&PointRewind != 0:
				class, mark = "pt pt-rewind", "rewind"
			case p.Flags&PointDeleted != 0:
				class, mark = "pt pt-deleted", "deleted"
			case p.Flags&PointWhileEmpty != 0:
				class = "pt pt-empty"
			}
			yy := vy(p.Value)
			if p.Flags&PointDeleted != 0 {
				yy = y + h
			}
			b.Shapes = append(b.Shapes, shape{Kind: "circle", X: s.x(p.X), Y: yy, W: 2.5, Class: class,
				Title: pointText(g, label, p, prevValue), Href: g.href(p.Row), Mark: mark, Count: 1})
		}
		if p.Flags&PointDeleted == 0 {
			v := p.Value
			prevValue = &v
		} else {
			prevValue = nil
		}
	}
	if detailed {
		return aggregated
	}
	for i := 0; i < len(cols); {
		j := i
		for j < len(cols) && cols[j].column < cols[i].column+hoverColumns {
			j++
		}
		n, lo, hi := 0, cols[i].min, cols[i].max
		for _, c := range cols[i:j] {
			n += c.count
			lo, hi = min(lo, c.min), max(hi, c.max)
		}
		f, l := cols[i].first, cols[j-1].last
		text := fmt.Sprintf("%s: %d commits, %s to %s; offsets %d to %d, last %d\nrecords partition %d offsets %d to %d",
			label, n, formatTime(f.Time), formatTime(l.Time), lo, hi, l.Value, g.Partition, f.Offset, l.Offset)
		b.Shapes = append(b.Shapes, shape{Kind: "rect", X: s.x0 + float64(cols[i].column), Y: y, W: float64(hoverColumns), H: h,
			Class: "hover", Title: text, Href: g.href(f.Row), Mark: "commits", Count: n})
		i = j
	}
	return true
}

// pointText is a committed offset's hover text: the value, the change, the record.
func pointText(g *Group, label string, p Point, prev *int64) string {
	var t strings.Builder
	switch {
	case p.Flags&PointDeleted != 0:
		fmt.Fprintf(&t, "%s: committed offset %d deleted", label, p.Value)
	case prev == nil:
		fmt.Fprintf(&t, "%s: committed %d", label, p.Value)
	default:
		fmt.Fprintf(&t, "%s: committed %d (was %d, %+d)", label, p.Value, *prev, p.Value-*prev)
	}
	if p.Flags&PointRewind != 0 {
		t.WriteString(": moved back")
	}
	if p.Flags&PointWhileEmpty != 0 {
		t.WriteString("; written while the group had no members (an admin tool or a standalone consumer)")
	}
	if p.Flags&PointWithoutOwner != 0 {
		t.WriteString("; written by no member owning the partition")
	}
	what := "OffsetCommit"
	switch {
	case p.Flags&PointTransactional != 0:
		what = "transactional OffsetCommit, made visible by its COMMIT marker"
	case p.Flags&PointDeleted != 0:
		what = "OffsetCommit tombstone"
	}
	fmt.Fprintf(&t, "\nrecord partition %d offset %d, %s, %s", g.Partition, p.Offset, formatTime(p.Time), what)
	return t.String()
}

// layoutTransactions draws each producer's transactions as spans ending in commit or abort.
func layoutTransactions(g *Group, s scale) block {
	b := newBlock("Transactions: offsets pending per producer until the commit or abort marker", "transactions", s)
	y := axisHeight
	for _, r := range g.Transactions {
		b.label(y+txnRow/2, fmt.Sprintf("producer %d", r.ProducerID), "", "")
		b.spans(g, s, r.Spans, y+3, txnRow-6, "tx-", "transaction", "transactions")
		y += txnRow
	}
	b.Height = y + 4
	b.packedNote()
	return b
}

// num formats a coordinate with at most one decimal: the page stays small.
func num(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// thousands renders n with thousands separators: 1,234,567.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// shorten cuts text to n characters in the middle, where names differ least: client ids of
// one application share their start, and the timeline tells members with the same client id
// apart by a suffix ("consumer-1 (b89022f5)").
func shorten(text string, n int) string {
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}
