// A fuzz target for operators' templates. Its body is a check function and
// its seeds a table, so that TinyGo, which compiles Fuzz targets but never
// runs them, runs the seeds too (fuzz_tinygo_test.go). make fuzz fuzzes
// every target for a bounded time.

package templates

import (
	"errors"
	"strings"
	"testing"
)

// templateSeeds are templates as operators write them, broken ones, and
// values a visitor may put in a page (a room name is the operator's, but a
// problem page's message may quote a request).
var templateSeeds = []struct {
	page       uint8
	src, value string
}{
	{0, "<p>{{room}}: ticket {{ ticket }}, {{ahead}} ahead, {{wait}}</p>", `<script>alert("x")</script>`},
	{1, "<meta http-equiv=refresh content={{retry_seconds}}>{{room}}", "'\"<>&"},
	{2, "<h1>{{title}}</h1><p>{{message}}</p>", "é \u2028 \x00 \xff &amp;"},
	{0, "{{nope}}", "x"},
	{1, "{{room", "x"},
	{2, "}}{{{title}}}{{", "<"},
	{0, "{{\vroom}}{{room\t}}", "<b>"},
	{2, "{{0\r0}}", ""},
	{2, "", ""},
}

// FuzzTemplate: no template or value panics Parse or Render; a refusal
// wraps ErrTemplate and fits on one log line (the edge logs it); and every
// value is escaped: the page holds exactly the characters that can open
// or quote markup (< > " ') that the template's own text holds, whatever
// the values.
func FuzzTemplate(f *testing.F) {
	for _, s := range templateSeeds {
		f.Add(s.page, s.src, s.value)
	}
	f.Fuzz(checkTemplate)
}

func checkTemplate(t *testing.T, page uint8, src, value string) {
	pages := []Page{Queue, Busy, Problem}
	p := pages[int(page)%len(pages)]
	tpl, err := p.Parse(src)
	if err != nil {
		if tpl != nil || !errors.Is(err, ErrTemplate) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("%s: Parse(%q) = %v, %q: an error must wrap ErrTemplate, come without a template and fit on a log line", p.Name, src, tpl, err)
		}
		return
	}
	values := map[string]string{}
	for i, f := range p.Fields {
		values[f] = value + strings.Repeat("<'", i%2)
	}
	page0, out := tpl.Render(nil), tpl.Render(values)
	for _, c := range []string{"<", ">", `"`, "'"} {
		if strings.Count(out, c) != strings.Count(page0, c) {
			t.Fatalf("%s: %q with values %q: a value's %s reached the page unescaped: %q", p.Name, src, value, c, out)
		}
	}
}
