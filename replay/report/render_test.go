package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pageStats is what a rendered page holds, read back from its markup.
type pageStats struct {
	// marks counts the shapes by data-mark, summing data-count (an aggregated column counts
	// what it stands for); shapes counts the elements.
	marks  map[string]int
	shapes map[string]int
	// ids are the element ids, hrefs the fragment links; sections the group sections.
	ids      map[string]bool
	hrefs    []string
	sections int
	titles   []string
	text     strings.Builder
	// groups are the per-section counts of marks, by section id.
	groups map[string]map[string]int
}

// readPage parses a rendered page as XML (the page is written to be well-formed) and checks
// what every page must hold: no fetch of anything (no src, no external href, no url() or
// @import), no script, every fragment link landing on an element of the page.
func readPage(t testing.TB, html []byte) *pageStats {
	t.Helper()
	st := &pageStats{marks: map[string]int{}, shapes: map[string]int{}, ids: map[string]bool{}, groups: map[string]map[string]int{}}
	d := xml.NewDecoder(bytes.NewReader(html))
	var stack []string
	inTitle := 0
	section := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the page is not well-formed")
		switch tk := tok.(type) {
		case xml.StartElement:
			name := tk.Name.Local
			stack = append(stack, name)
			require.NotEqual(t, "script", name, "the page has a script")
			require.NotEqual(t, "img", name)
			require.NotEqual(t, "link", name)
			require.NotEqual(t, "iframe", name)
			attrs := map[string]string{}
			for _, a := range tk.Attr {
				attrs[a.Name.Local] = a.Value
				switch a.Name.Local {
				case "src":
					t.Fatalf("<%s src=%q>: the page fetches something", name, a.Value)
				case "href":
					require.True(t, strings.HasPrefix(a.Value, "#"), "<%s href=%q>: a link out of the page", name, a.Value)
					st.hrefs = append(st.hrefs, a.Value[1:])
				case "id":
					require.False(t, st.ids[a.Value], "id %q twice", a.Value)
					st.ids[a.Value] = true
				case "style":
					t.Fatalf("<%s style=...>: styles belong in the stylesheet", name)
				}
				if strings.HasPrefix(a.Name.Local, "on") {
					t.Fatalf("<%s %s=...>: an event handler is a script", name, a.Name.Local)
				}
			}
			if m, ok := attrs["data-mark"]; ok {
				n, err := strconv.Atoi(attrs["data-count"])
				require.NoError(t, err, "data-count of a %s mark", m)
				st.marks[m] += n
				st.shapes[m]++
				if section != "" {
					st.groups[section][m] += n
				}
			}
			if name == "section" && attrs["class"] == "group" {
				st.sections++
				section = attrs["id"]
				st.groups[section] = map[string]int{}
			}
			if name == "title" {
				inTitle++
			}
		case xml.EndElement:
			if tk.Name.Local == "title" {
				inTitle--
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			s := string(tk)
			if len(stack) > 0 && stack[len(stack)-1] == "style" {
				require.NotContains(t, s, "url(", "the stylesheet fetches something")
				require.NotContains(t, s, "@import")
				continue
			}
			if inTitle > 0 && len(stack) > 1 {
				st.titles = append(st.titles, s)
			}
			st.text.WriteString(s)
		}
	}
	require.Empty(t, stack, "unclosed elements")
	for _, h := range st.hrefs {
		require.True(t, st.ids[h], "link to #%s, which no element has", h)
	}
	return st
}

// samplePage is a hand-made picture with a bit of everything, group ids and client ids that
// need escaping included.
func samplePage() *Page {
	src := func(off int64, t int64, kind string, row int) Src {
		return Src{Partition: 3, Offset: off, LastOffset: off, Time: t, Records: "ConsumerGroupMemberMetadata", Kind: kind, Row: row}
	}
	const t0 = 1795979153602
	g := &Group{ID: `orders<script>alert("x")</script>`, Type: "consumer", Partition: 3, State: "Stable", Members: 2,
		Anchor: "g1", Drawn: true, Axis: Axis{Start: t0, End: t0 + 60_000},
		Counts: Counts{Events: 9, Rebalances: 2, Rewinds: 1, Fenced: 1}}
	g.Records = []Record{
		{Src: src(0, t0, "member-joined", 0), Text: "c1 joined"},
		{Src: src(1, t0, "rebalance", 1), Text: "rebalance to epoch 2: c1 joined"},
		{Src: src(9, t0+20_000, "offsets-committed", 2), Text: "c1 committed", Marks: []string{"rewind"}},
	}
	g.Epochs = []Step{{X: t0, Epoch: 2, Src: src(1, t0, "rebalance", 1)}, {X: t0 + 30_000, Epoch: 3, Src: src(20, t0+30_000, "rebalance", -1)}}
	g.Rebalances = []Span{
		{Start: t0, End: t0 + 900, Class: "converged", Label: "2", Text: "epoch 2: c1 joined", Src: src(1, t0, "rebalance", 1)},
		{Start: t0 + 30_000, End: t0 + 60_000, Class: "open", Label: "3", Text: "epoch 3: c2 <joined>", Src: src(20, t0+30_000, "rebalance", -1), Open: true},
	}
	g.Lanes = []*Lane{
		{Key: "m1", Name: "c1 (127.0.0.1)", Detail: "member m1", Color: 0, Segments: []Span{
			{Start: t0, End: t0 + 900, Class: "joined", Text: "c1 joined", Src: src(0, t0, "member-joined", 0)},
			{Start: t0 + 900, End: t0 + 60_000, Class: "stable", Text: "c1 stable", Src: src(4, t0+900, "reconcile", -1), Open: true},
		}, Marks: []Mark{{X: t0, Class: "joined", Text: "c1 joined", Src: src(0, t0, "member-joined", 0)}}},
		{Key: "m2", Name: `c2 "quoted" & <b>`, Color: 1, Segments: []Span{
			{Start: t0 + 30_000, End: t0 + 40_000, Class: "reconciling", Text: "c2 waits", Src: src(21, t0+30_000, "reconcile", -1)},
		}, Marks: []Mark{{X: t0 + 40_000, Class: "fenced", Text: "c2 fenced", Src: src(30, t0+40_000, "member-fenced", -1)}}},
	}
	g.Assignment = []*AssignRow{{Label: "in-0",
		Target:  []Owner{{Start: t0, End: t0 + 60_000, Lane: 0, Open: true}},
		Current: []Owner{{Start: t0 + 900, End: t0 + 60_000, Lane: 0, Open: true}}}}
	g.Offsets = []*Series{{Topic: "in", Partition: 0, Rewinds: 1, Points: []Point{
		{X: t0 + 10_000, Value: 100, Offset: 8, Time: t0 + 10_000, Row: -1},
		{X: t0 + 20_000, Value: 40, Offset: 9, Time: t0 + 20_000, Flags: PointRewind, Row: 2},
		{X: t0 + 50_000, Value: 40, Offset: 40, Time: t0 + 50_000, Flags: PointDeleted, Row: -1},
	}}}
	g.Transactions = []*TxnRow{{ProducerID: 4001, Spans: []Span{
		{Start: t0 + 5_000, End: t0 + 6_000, Class: "committed", Text: "committed", Src: src(5, t0+5_000, "transaction-end", -1)},
		{Start: t0 + 50_000, End: t0 + 60_000, Class: "open", Text: "open", Src: src(50, t0+50_000, "transaction-open", -1), Open: true},
	}}}
	empty := &Group{ID: "quiet", Type: "classic", State: "Empty", Anchor: "g2", LastActivity: Src{Time: -1}}
	return &Page{Input: "/tmp/x", Title: "coordlog report", Partitions: []int32{3}, Records: 1234567, Rules: "Kafka 4.4 rules",
		Overview: []*Group{g, empty}, Groups: []*Group{g}}
}

func TestRenderSample(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, samplePage()))
	st := readPage(t, buf.Bytes())
	require.Equal(t, 1, st.sections)
	require.Equal(t, 2, st.marks["rebalance"])
	require.Equal(t, 2, st.marks["lane"])
	require.Equal(t, 1, st.marks["rewind"])
	require.Equal(t, 1, st.marks["member-fenced"])
	require.Equal(t, 2, st.marks["transaction"])
	// The group id is text, not markup.
	require.NotContains(t, buf.String(), "<script>")
	require.Contains(t, st.text.String(), `orders<script>alert("x")</script>`)
	require.Contains(t, st.text.String(), `c2 "quoted" & <b>`)
	require.Contains(t, st.text.String(), "1,234,567 records in 1 partition(s) (3), Kafka 4.4 rules; 2 group(s), 1 drawn")
	if dir := os.Getenv("REPORT_SAMPLE_OUT"); dir != "" {
		require.NoError(t, os.WriteFile(dir+"/sample.html", buf.Bytes(), 0o644))
	}
}

// TestAggregation draws more rebalances, member states and commits than the plot has pixel
// columns: every one is still counted by the marks (data-count), a row never has more shapes
// than columns, every rewind keeps its own marker, and the page says the row is aggregated.
func TestAggregation(t *testing.T) {
	const t0, n = 1_700_000_000_000, 20_000
	g := &Group{ID: "storm", Type: "consumer", Anchor: "g1", Drawn: true, Axis: Axis{Start: t0, End: t0 + n*10},
		LastActivity: Src{Time: -1}}
	lane := &Lane{Key: "m", Name: "c1"}
	sr := &Series{Topic: "in", Partition: 0}
	rewinds := 0
	for i := int64(0); i < n; i++ {
		x := t0 + i*10
		src := Src{Partition: 0, Offset: i, LastOffset: i, Time: x, Row: -1}
		g.Rebalances = append(g.Rebalances, Span{Start: x, End: x + 5, Class: []string{"converged", "superseded"}[i%2], Src: src})
		lane.Segments = append(lane.Segments, Span{Start: x, End: x + 10, Class: []string{"stable", "reconciling"}[i%2], Src: src})
		p := Point{X: x, Value: i, Offset: i, Time: x, Row: -1}
		if i%5000 == 4999 {
			p.Value, p.Flags = 0, PointRewind
			rewinds++
		}
		sr.Points = append(sr.Points, p)
	}
	g.Lanes = []*Lane{lane}
	g.Offsets = []*Series{sr}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, &Page{Title: "t", Overview: []*Group{g}, Groups: []*Group{g}}))
	st := readPage(t, buf.Bytes())
	require.Equal(t, n, st.marks["rebalance"])
	require.Equal(t, n, st.marks["segment"])
	require.Equal(t, n, st.marks["commits"]+st.marks["rewind"]-rewinds, "every commit is in one hover column")
	require.Equal(t, rewinds, st.marks["rewind"])
	require.LessOrEqual(t, st.shapes["rebalance"], int(plotWidth)/bucketPx)
	require.LessOrEqual(t, st.shapes["segment"], int(plotWidth)/bucketPx)
	require.LessOrEqual(t, st.shapes["commits"], hoverBudget+1)
	text := st.text.String()
	require.True(t, strings.Contains(text, "1 of 1 rows have more commits than pixels"), "the page says the offsets are aggregated")
	require.True(t, strings.Contains(text, "40,000 marks narrower than 2 pixels are drawn together"), "the page says the spans are aggregated")
	require.True(t, strings.Contains(text, thousands(n-maxRebalanceRows)+" more rebalances"), "the page says the rebalance table is cut")
	require.Less(t, buf.Len(), 1<<20, "a page of 60,000 marks stays small")
}

// TestDeterministic: the same picture gives the same bytes.
func TestDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	require.NoError(t, Write(&a, samplePage()))
	require.NoError(t, Write(&b, samplePage()))
	require.Equal(t, a.String(), b.String())
}

func TestTicks(t *testing.T) {
	const t0 = 1795979153602 // 2026-11-29T19:05:53.602Z
	for _, c := range []struct {
		span  int64
		first string
		n     int
	}{
		{span: 900, first: "19:05:53.800", n: 4},
		{span: 21_880, first: "19:05:55", n: 5},
		{span: 3 * 3_600_000, first: "19:30", n: 6},
		{span: 9 * 86_400_000, first: "2026-12-01", n: 4},
	} {
		s := newScale(Axis{Start: t0, End: t0 + c.span}, gutter, plotWidth)
		ticks := s.ticks(maxTicks)
		require.NotEmpty(t, ticks, "span %d", c.span)
		require.Equal(t, c.first, ticks[0].Label, "span %d", c.span)
		require.Len(t, ticks, c.n, "span %d", c.span)
		for _, tk := range ticks {
			require.GreaterOrEqual(t, tk.X, gutter)
			require.LessOrEqual(t, tk.X, gutter+plotWidth)
		}
	}
	s := newScale(Axis{Unit: UnitOffset, Start: 120, End: 1875}, gutter, plotWidth)
	require.Equal(t, "200", s.ticks(maxTicks)[0].Label)
}

// TestControlCharacters: a group id is any string; control characters and bytes that are not
// UTF-8 are shown as escapes and U+FFFD, and the page stays well-formed, also when the writes
// cut a character in two.
func TestControlCharacters(t *testing.T) {
	p := samplePage()
	p.Groups[0].ID = "orders\x01\x7f\xffé"
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, p))
	st := readPage(t, buf.Bytes())
	require.Contains(t, st.text.String(), `orders\x01\x7f`+"\uFFFDé")

	var out bytes.Buffer
	v := &visible{w: &out}
	for _, c := range []byte("a\u00e9\u2028b\x02") { // one byte per write
		_, err := v.Write([]byte{c})
		require.NoError(t, err)
	}
	require.Equal(t, "a\u00e9\u2028b\\x02", out.String())
}
