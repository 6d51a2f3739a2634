package report

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"unicode/utf8"
)

//go:embed page.html
var pageTemplate string

//go:embed page.css
var pageCSS string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"px":  num,
	"add": func(a, b float64) float64 { return a + b },
}).Parse(pageTemplate))

// Write renders p as one self-contained HTML page: inline SVG and CSS, no script, and a
// Content-Security-Policy that forbids every fetch, so that the file reads the same offline
// and attached to a ticket. Every text from the log (group ids, client ids, hosts, topics) is
// escaped by html/template.
func Write(w io.Writer, p *Page) error {
	bw := bufio.NewWriterSize(&visible{w: w}, 1<<16)
	v := layoutPage(p)
	err := page.Execute(bw, struct {
		pageView
		CSS template.CSS
	}{v, template.CSS(pageCSS)})
	if err != nil {
		return fmt.Errorf("rendering the report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// visible passes the page through with what the log may hold but a page must not: control
// characters (a group id is any string) become visible escapes ("\x01"), bytes that are not
// UTF-8 become U+FFFD. The page stays well-formed, and the reader sees that the id holds them.
type visible struct {
	w       io.Writer
	pending []byte // the start of a UTF-8 sequence cut by the previous write
	out     []byte
}

func (v *visible) Write(p []byte) (int, error) {
	n := len(p)
	if len(v.pending) > 0 {
		p = append(v.pending, p...)
		v.pending = nil
	}
	out := v.out[:0]
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				out = fmt.Appendf(out, "\\x%02x", c)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(p[i:]) {
				v.pending = append([]byte(nil), p[i:]...) // completed by the next write
				break
			}
			out = append(out, "\uFFFD"...)
			i++
			continue
		}
		out = append(out, p[i:i+size]...)
		i += size
	}
	v.out = out
	if _, err := v.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}
