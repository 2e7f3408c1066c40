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
//
// Inline <script> and <style> elements must be constant (no {{name}}
// inside), so that the page's Content-Security-Policy can allow exactly
// them by their SHA-256 hashes, computed when the template is parsed
// (Template.Policy). The one exception is a style element holding only
// {{theme}}: the room's colours, whose hash is taken when the page is
// rendered.
//
// {{> page.css}} and {{> page.js}} include the built-in pages' style and
// live-update script, as they are, when the template is parsed: the
// default pages share them, and an operator's template can use them too.
package templates

import (
	"crypto/sha256"
	_ "embed" // the default pages
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
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
	//go:embed cookies.html
	cookiesHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
	//go:embed work.html
	workHTML string
	//go:embed work.js
	workJS string
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
		"room", "ticket", "position", "ahead", "now_serving", "serving", "issued",
		"wait", "refresh_seconds", "status", "draw",
		"lang", "title", "message", "logo_url", "support_link", "support_label", "theme",
		"announce", "position_number", "progress", "progress_max", "updated", "updated_iso",
		"label_place", "label_ahead", "label_wait", "label_ticket", "label_serving", "label_updated", "label_progress",
		"turn_note", "keep_note", "live_note", "refresh_label",
		"work_seed", "work_bits", "work_cookie",
	}}
	// Prequeue counts down to a scheduled sale's start for a visitor in
	// its pre-queue.
	Prequeue = Page{Name: "prequeue.html", Fields: []string{
		"room", "event", "starts", "opens_in", "refresh_seconds", "commitment",
		"lang", "title", "message", "logo_url", "support_link", "support_label", "theme",
		"intro", "label_opens", "draw_note", "commitment_note", "keep_note", "live_note", "refresh_label",
	}}
	// Busy asks a visitor to retry when the store cannot be reached.
	Busy = Page{Name: "busy.html", Fields: []string{
		"room", "retry_seconds", "lang", "title", "text", "logo_url", "theme", "live_note", "refresh_label",
	}}
	// Problem explains that the service cannot serve the request (and,
	// in the room's language and colours, that a room is closed).
	Problem = Page{Name: "problem.html", Fields: []string{"title", "message", "lang", "theme"}}
	// Cookies tells a visitor that the line needs its cookie, which their
	// browser did not keep, with a link back to the page they asked for
	// (retry_url).
	Cookies = Page{Name: "cookies.html", Fields: []string{
		"room", "lang", "title", "text", "retry_url", "retry_label", "apps_note",
		"logo_url", "theme", "support_link", "support_label",
	}}
	// Work asks a newcomer's browser for the room's proof of work before
	// it joins (package challenge): its script ({{> work.js}}) finds the
	// nonce for seed and bits, keeps it in the cookie named cookie, and
	// goes on to next_url. Without JavaScript, at the ladder's lowest
	// rung, noscript_refresh ("5; url=…") takes the browser on after the
	// wait that stands for the work; above it, it is empty.
	Work = Page{Name: "work.html", Fields: []string{
		"room", "lang", "title", "text", "seed", "bits", "next_url", "cookie", "noscript_refresh",
		"progress_label", "progress_note", "done_note", "noscript_note", "retry_label",
		"logo_url", "theme", "support_link", "support_label",
	}}
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
	used uint64
	// scripts and styles are the 'sha256-…' sources of the inline
	// scripts and styles; themed is true when a style element holds
	// only {{theme}}.
	scripts, styles []string
	themed          bool
	// solves is true for a template that includes work.js, whose search
	// runs in a worker made from its own source (a blob: URL).
	solves bool
}

// part is literal text, or (field >= 0) the value of names[field].
type part struct {
	text  string
	field int
}

// Solves reports whether t includes the proof of work's script (work.js).
func (t *Template) Solves() bool { return t.solves }

// maxCached is how many of a page's names Render looks up once and keeps;
// pages have a few dozen, and any beyond are looked up at each use.
const maxCached = 64

// Parse parses src as a template of page p.
func (p Page) Parse(src string) (*Template, error) {
	if len(src) > maxTemplate {
		return nil, fmt.Errorf("%w: %s: %d bytes, the limit is %d", ErrTemplate, p.Name, len(src), maxTemplate)
	}
	src, err := p.include(src)
	if err != nil {
		return nil, err
	}
	// One allocation for the parts: each {{ adds a name and the text
	// after it.
	t := &Template{name: p.Name, names: p.Fields, parts: make([]part, 0, 2*strings.Count(src, "{{")+1),
		solves: strings.Contains(src, workJS)}
	rest := src
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			t.parts = append(t.parts, part{text: rest, field: -1})
			if err := t.hashInline(src); err != nil {
				return nil, err
			}
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

// include replaces each {{> name}} in src with the shared file it names.
func (p Page) include(src string) (string, error) {
	if !strings.Contains(src, "{{>") {
		return src, nil
	}
	var b strings.Builder
	rest := src
	for {
		open := strings.Index(rest, "{{>")
		if open < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:open])
		rest = rest[open+3:]
		end := strings.Index(rest, "}}")
		if end < 0 {
			return "", fmt.Errorf("%w: %s: a {{> at byte %d is never closed", ErrTemplate, p.Name, len(src)-len(rest)-3)
		}
		switch name := strings.TrimSpace(rest[:end]); name {
		case "page.css":
			b.WriteString(pageCSS)
		case "page.js":
			b.WriteString(pageJS)
		case "work.js":
			b.WriteString(workJS)
		default:
			return "", fmt.Errorf("%w: %s: unknown include {{> %s}}; there are page.css, page.js and work.js", ErrTemplate, p.Name, unquoted(name))
		}
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

// Default returns the embedded template of page p, parsed at its first
// use and kept: a reused sandbox then hashes its inline script once.
func (p Page) Default() (*Template, error) {
	src, ok := defaultSource(p.Name)
	if !ok {
		return nil, fmt.Errorf("%w: %s: no default", ErrTemplate, p.Name)
	}
	d := &defaults[defaultIndex(p.Name)]
	d.once.Do(func() { d.t, d.err = p.Parse(src) })
	return d.t, d.err
}

// defaults are the parsed default pages, in defaultIndex's order.
var defaults [6]struct {
	once sync.Once
	t    *Template
	err  error
}

// defaultIndex is the position of the default page name in defaults.
func defaultIndex(name string) int {
	switch name {
	case "busy.html":
		return 1
	case "problem.html":
		return 2
	case "prequeue.html":
		return 3
	case "cookies.html":
		return 4
	case "work.html":
		return 5
	}
	return 0
}

// hashInline finds the template's inline script and style elements,
// refuses a placeholder inside one (but a style of exactly {{theme}}),
// and keeps their hashes for Policy.
func (t *Template) hashInline(src string) error {
	pos := 0
	for {
		start, name := nextInline(src, pos)
		if start < 0 {
			return nil
		}
		open := strings.IndexByte(src[start:], '>')
		if open < 0 {
			return fmt.Errorf("%w: %s: the <%s> tag at byte %d is never closed", ErrTemplate, t.name, name, start)
		}
		body := start + open + 1
		end := indexFold(src, "</"+name, body)
		if end < 0 {
			return fmt.Errorf("%w: %s: the <%s> element at byte %d has no </%s>", ErrTemplate, t.name, name, start, name)
		}
		text := src[body:end]
		switch {
		case name == "style" && text == "{{theme}}":
			t.themed = true
		case strings.Contains(text, "{{"):
			return fmt.Errorf("%w: %s: a {{name}} inside the <%s> at byte %d: inline scripts and styles must be constant, "+
				"so the Content-Security-Policy can allow them by hash (only a <style>{{theme}}</style> may hold a name)",
				ErrTemplate, t.name, name, start)
		case text == "":
		case name == "script":
			t.scripts = append(t.scripts, hashSource(text))
		default:
			t.styles = append(t.styles, hashSource(text))
		}
		pos = end
	}
}

// nextInline finds the next <script or <style start tag in src from pos,
// in any case.
func nextInline(src string, pos int) (int, string) {
	for {
		i := strings.IndexByte(src[pos:], '<')
		if i < 0 {
			return -1, ""
		}
		i += pos
		for _, name := range [...]string{"script", "style"} {
			after := i + 1 + len(name)
			if after < len(src) && indexFold(src[:after], name, i+1) == i+1 {
				if c := src[after]; c == '>' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' {
					return i, name
				}
			}
		}
		pos = i + 1
	}
}

// indexFold is the index of the ASCII word sub in s from from on, in any
// case, or -1.
func indexFold(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && lower(s[i+j]) == sub[j] {
			j++
		}
		if j == len(sub) {
			return i
		}
	}
	return -1
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hashSource is text's CSP hash source, 'sha256-<base64>'.
func hashSource(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Policy is the Content-Security-Policy for a page rendered from t with
// the theme value given: the inline scripts and styles allowed by hash
// and nothing else inline; the site's own stylesheets and fonts (an
// operator's template may use them); images from the site, https: (a
// room's logo_url) and data:; fetches only to the page's own origin (the
// script's polls); no forms, no framing, no base URL; and, for a page
// that includes work.js, workers from blob: URLs (its search's).
func (t *Template) Policy(theme string) string {
	var b strings.Builder
	b.WriteString("default-src 'none'; script-src")
	if len(t.scripts) == 0 {
		b.WriteString(" 'none'")
	}
	for _, h := range t.scripts {
		b.WriteString(" ")
		b.WriteString(h)
	}
	b.WriteString("; style-src 'self'")
	for _, h := range t.styles {
		b.WriteString(" ")
		b.WriteString(h)
	}
	if t.themed && theme != "" {
		var esc strings.Builder
		writeEscaped(&esc, theme)
		b.WriteString(" ")
		b.WriteString(hashSource(esc.String()))
	}
	b.WriteString("; img-src 'self' https: data:; font-src 'self'; connect-src 'self'; " +
		"form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
	if t.solves {
		b.WriteString("; worker-src blob:")
	}
	return b.String()
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
	case "cookies.html":
		return cookiesHTML, true
	case "work.html":
		return workHTML, true
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
