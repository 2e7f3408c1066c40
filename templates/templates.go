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
	_ "embed" // the default pages
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The default pages, embedded as strings rather than an embed.FS: a
// string is read in place, where FS.ReadFile copies the file on every
// request that shows a page.
var (
	//go:embed queue.html
	queueHTML string
	//go:embed busy.html
	busyHTML string
	//go:embed problem.html
	problemHTML string
	//go:embed prequeue.html
	prequeueHTML string
)

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
		"wait", "refresh_seconds", "status", "draw",
	}}
	// Prequeue counts down to a scheduled sale's start for a visitor in
	// its pre-queue.
	Prequeue = Page{Name: "prequeue.html", Fields: []string{
		"room", "event", "starts", "opens_in", "refresh_seconds", "commitment",
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
	// names are the page's Fields, which parts refer to by index.
	names []string
	// used has bit i set when the template uses names[i] (i < maxCached).
	used uint32
}

// part is literal text, or (field >= 0) the value of names[field].
type part struct {
	text  string
	field int
}

// maxCached is how many of a page's names Render looks up once and keeps;
// pages have a handful, and any beyond are looked up at each use.
const maxCached = 32

// Parse parses src as a template of page p.
func (p Page) Parse(src string) (*Template, error) {
	if len(src) > maxTemplate {
		return nil, fmt.Errorf("%w: %s: %d bytes, the limit is %d", ErrTemplate, p.Name, len(src), maxTemplate)
	}
	// One allocation for the parts: each {{ adds a name and the text
	// after it.
	t := &Template{name: p.Name, names: p.Fields, parts: make([]part, 0, 2*strings.Count(src, "{{")+1)}
	rest := src
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			t.parts = append(t.parts, part{text: rest, field: -1})
			return t, nil
		}
		t.parts = append(t.parts, part{text: rest[:open], field: -1})
		rest = rest[open+2:]
		end := strings.Index(rest, "}}")
		if end < 0 {
			return nil, fmt.Errorf("%w: %s: a {{ at byte %d is never closed", ErrTemplate, p.Name, len(src)-len(rest)-2)
		}
		name := strings.TrimSpace(rest[:end])
		field := p.index(name)
		if field < 0 {
			return nil, fmt.Errorf("%w: %s: unknown name {{%s}}; this page provides %s", ErrTemplate, p.Name, unquoted(name), strings.Join(p.Fields, ", "))
		}
		if field < maxCached {
			t.used |= 1 << field
		}
		t.parts = append(t.parts, part{field: field})
		rest = rest[end+2:]
	}
}

// unquoted is s escaped as %q escapes it, without the quotes: a name
// reads as written in the error ("{{nme}}"), and one holding a line break
// cannot split the log line that quotes the error.
func unquoted(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// index returns the position of name in p.Fields, or -1.
func (p Page) index(name string) int {
	for i, f := range p.Fields {
		if f == name {
			return i
		}
	}
	return -1
}

// Default returns the embedded template of page p.
func (p Page) Default() (*Template, error) {
	src, ok := defaultSource(p.Name)
	if !ok {
		return nil, fmt.Errorf("%w: %s: no default", ErrTemplate, p.Name)
	}
	return p.Parse(src)
}

// defaultSource returns the embedded page called name.
func defaultSource(name string) (string, bool) {
	switch name {
	case "queue.html":
		return queueHTML, true
	case "busy.html":
		return busyHTML, true
	case "problem.html":
		return problemHTML, true
	case "prequeue.html":
		return prequeueHTML, true
	}
	return "", false
}

// Render substitutes values, HTML-escaped, for the template's names. A name
// without a value renders as nothing.
//
// The page is allocated once, at its final size, because under TinyGo
// each allocated byte costs its share of a garbage collection, and the
// page is most of what a waiting visitor's request allocates: Render
// measures the escaped page first, looks each value up once (a TinyGo map
// lookup by string allocates), and escapes while copying, as
// html.EscapeString would, rather than building an escaped copy of each
// value and growing a buffer as it goes.
func (t *Template) Render(values map[string]string) string {
	var cache [maxCached]string
	for i := 0; i < len(t.names) && i < maxCached; i++ {
		if t.used&(1<<i) != 0 {
			cache[i] = values[t.names[i]]
		}
	}
	size := 0
	for _, p := range t.parts {
		if p.field < 0 {
			size += len(p.text)
		} else {
			size += escapedLen(t.value(&cache, values, p.field))
		}
	}
	var b strings.Builder
	b.Grow(size)
	for _, p := range t.parts {
		if p.field < 0 {
			b.WriteString(p.text)
		} else {
			writeEscaped(&b, t.value(&cache, values, p.field))
		}
	}
	return b.String()
}

// value returns the value of names[field].
func (t *Template) value(cache *[maxCached]string, values map[string]string, field int) string {
	switch {
	case field < 0 || field >= len(t.names):
		return "" // Parse never makes such a part
	case field < maxCached:
		return cache[field]
	}
	return values[t.names[field]]
}

// escape returns html.EscapeString's replacement for c, or "" when c
// stays as it is.
func escape(c byte) string {
	switch c {
	case '&':
		return "&amp;"
	case '\'':
		return "&#39;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '"':
		return "&#34;"
	}
	return ""
}

// escapedLen is len(html.EscapeString(s)).
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if e := escape(s[i]); e != "" {
			n += len(e) - 1
		}
	}
	return n
}

// writeEscaped writes html.EscapeString(s), copying runs that need no
// escaping whole.
func writeEscaped(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		if e := escape(s[i]); e != "" {
			b.WriteString(s[last:i])
			b.WriteString(e)
			last = i + 1
		}
	}
	b.WriteString(s[last:])
}
