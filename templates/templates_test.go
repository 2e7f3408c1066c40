package templates

import (
	"errors"
	"html"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// defaultPages are the pages with a built-in template.
var defaultPages = []Page{Queue, Busy, Problem, Prequeue, Cookies}

func TestDefaultsParse(t *testing.T) {
	for _, p := range defaultPages {
		tpl, err := p.Default()
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		values := map[string]string{}
		for _, f := range p.Fields {
			values[f] = "<" + f + ">"
		}
		out := tpl.Render(values)
		for _, f := range p.Fields {
			if strings.Contains(mustRead(t, p.Name), "{{"+f+"}}") && !strings.Contains(out, "&lt;"+f+"&gt;") {
				t.Errorf("%s: {{%s}} not rendered escaped", p.Name, f)
			}
		}
		if strings.Contains(out, "{{") {
			t.Errorf("%s: placeholder left in output", p.Name)
		}
	}
}

func mustRead(tb testing.TB, name string) string {
	tb.Helper()
	src, ok := defaultSource(name)
	if !ok || !strings.Contains(src, "<") {
		tb.Fatalf("%s: no default page", name)
	}
	return src
}

func TestDefaultsAreTheFiles(t *testing.T) {
	for _, p := range defaultPages {
		file, err := os.ReadFile(p.Name)
		if err != nil && runtime.GOOS == "wasip1" {
			// TinyGo's wazero target mounts only /tmp; Go's mounts /.
			t.Logf("the package directory is not mounted: %v", err)
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if mustRead(t, p.Name) != string(file) {
			t.Errorf("%s: the embedded default is not the file", p.Name)
		}
	}
	if _, err := (Page{Name: "nope.html"}).Default(); !errors.Is(err, ErrTemplate) {
		t.Errorf("a page without a default: %v", err)
	}
}

func TestParse(t *testing.T) {
	page := Page{Name: "t.html", Fields: []string{"a", "b"}}
	tests := []struct {
		src, want, wantErr string
	}{
		{"plain", "plain", ""},
		{"{{a}} and {{ b }}", "&lt;script&gt; and &#34;q&#34;", ""},
		{"{{a}}{{a}}", "&lt;script&gt;&lt;script&gt;", ""},
		{"x {{c}}", "", "unknown name {{c}}"},
		{"x {{a", "", "never closed"},
		{"}} {", "}} {", ""},
		{strings.Repeat("x", maxTemplate+1), "", "the limit is"},
	}
	for _, tc := range tests {
		tpl, err := page.Parse(tc.src)
		if tc.wantErr != "" {
			if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%.20q: %v, want %q", tc.src, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if got := tpl.Render(map[string]string{"a": "<script>", "b": `"q"`}); got != tc.want {
			t.Errorf("%q renders %q, want %q", tc.src, got, tc.want)
		}
	}
}

// naiveRender is what Render must produce, the plain way: every {{name}}
// of the page's default source replaced by html.EscapeString of its value.
func naiveRender(tb testing.TB, p Page, values map[string]string) string {
	tb.Helper()
	src, err := p.include(mustRead(tb, p.Name))
	if err != nil {
		tb.Fatal(err)
	}
	return regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`).ReplaceAllStringFunc(src, func(m string) string {
		return html.EscapeString(values[strings.Trim(m, "{} \t\n")])
	})
}

func TestRenderMatchesNaive(t *testing.T) {
	hostile := []string{"", "plain", `<script>alert("x")</script>`, "&amp; already", "'\"<>&", "é ü \u2028 \x00 \xff", strings.Repeat("<&>", 2000)}
	for _, p := range defaultPages {
		tpl, err := p.Default()
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hostile {
			values := map[string]string{}
			for i, f := range p.Fields {
				values[f] = h + strings.Repeat("x", i)
			}
			if got, want := tpl.Render(values), naiveRender(t, p, values); got != want {
				t.Errorf("%s with %.20q:\n got %.200q\nwant %.200q", p.Name, h, got, want)
			}
		}
		if got, want := tpl.Render(nil), naiveRender(t, p, nil); got != want {
			t.Errorf("%s without values: %q, want %q", p.Name, got, want)
		}
	}
}

func TestManyNames(t *testing.T) {
	// More names than Render keeps looked up: the rest are looked up at
	// each use.
	var fields []string
	var src strings.Builder
	values := map[string]string{}
	for i := 0; i < maxCached+8; i++ {
		f := "f" + strings.Repeat("x", i)
		fields = append(fields, f)
		values[f] = "<" + f + ">"
		src.WriteString("{{" + f + "}}|")
	}
	tpl, err := Page{Name: "many.html", Fields: fields}.Parse(src.String())
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, f := range fields {
		want.WriteString(html.EscapeString(values[f]) + "|")
	}
	if got := tpl.Render(values); got != want.String() {
		t.Errorf("got %q, want %q", got, want.String())
	}
}
