// Package templates holds the pages the waiting room serves and the small
// substitution language they are written in.
//
// A template is HTML with {{name}} placeholders. Every value is
// HTML-escaped when it is substituted, and a template that uses a name its
// page does not provide is refused when it is parsed, so an operator's typo
// shows up as a load error rather than a blank on the page. The language
// has no logic on purpose: Go's template packages need reflection that
// TinyGo lacks, and pages this simple do not need more.
//
// The default pages are embedded; operators override one by putting a
// template with the same name in the KV store.
package templates

import (
	"embed"
	"errors"
	"fmt"
	"html"
	"strings"
)

//go:embed *.html
var defaults embed.FS

// ErrTemplate wraps every parse error.
var ErrTemplate = errors.New("invalid template")

// Page is a kind of page: its default template's name and the names its
// templates may use.
type Page struct {
	Name   string
	Fields []string
}

// The pages the waiting room serves.
var (
	// Queue shows a waiting visitor their place.
	Queue = Page{Name: "queue.html", Fields: []string{
		"room", "ticket", "position", "ahead", "now_serving", "issued",
		"wait", "refresh_seconds", "status",
	}}
	// Busy asks a visitor to retry when the store cannot be reached.
	Busy = Page{Name: "busy.html", Fields: []string{"room", "retry_seconds"}}
	// Problem explains that the service cannot serve the request.
	Problem = Page{Name: "problem.html", Fields: []string{"title", "message"}}
)

// maxTemplate bounds an operator's template: a page is a few kilobytes, and
// parsing must stay well inside the edge's CPU budget.
const maxTemplate = 256 << 10

// Template is a parsed page.
type Template struct {
	name  string
	parts []part
}

type part struct {
	text  string
	field string
}

// Parse parses src as a template of page p.
func (p Page) Parse(src string) (*Template, error) {
	if len(src) > maxTemplate {
		return nil, fmt.Errorf("%w: %s: %d bytes, the limit is %d", ErrTemplate, p.Name, len(src), maxTemplate)
	}
	t := &Template{name: p.Name}
	rest := src
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			t.parts = append(t.parts, part{text: rest})
			return t, nil
		}
		t.parts = append(t.parts, part{text: rest[:open]})
		rest = rest[open+2:]
		end := strings.Index(rest, "}}")
		if end < 0 {
			return nil, fmt.Errorf("%w: %s: a {{ at byte %d is never closed", ErrTemplate, p.Name, len(src)-len(rest)-2)
		}
		field := strings.TrimSpace(rest[:end])
		if !p.has(field) {
			return nil, fmt.Errorf("%w: %s: unknown name {{%s}}; this page provides %s", ErrTemplate, p.Name, field, strings.Join(p.Fields, ", "))
		}
		t.parts = append(t.parts, part{field: field})
		rest = rest[end+2:]
	}
}

func (p Page) has(field string) bool {
	for _, f := range p.Fields {
		if f == field {
			return true
		}
	}
	return false
}

// Default returns the embedded template of page p.
func (p Page) Default() (*Template, error) {
	src, err := defaults.ReadFile(p.Name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: no default: %v", ErrTemplate, p.Name, err)
	}
	return p.Parse(string(src))
}

// Render substitutes values, HTML-escaped, for the template's names. A name
// without a value renders as nothing.
func (t *Template) Render(values map[string]string) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.field == "" {
			b.WriteString(p.text)
			continue
		}
		b.WriteString(html.EscapeString(values[p.field]))
	}
	return b.String()
}
