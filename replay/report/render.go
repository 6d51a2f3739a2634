package report

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
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
	bw := bufio.NewWriterSize(w, 1<<16)
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
