package templates

import (
	"errors"
	"strings"
	"testing"
)

func TestDefaultsParse(t *testing.T) {
	for _, p := range []Page{Queue, Busy, Problem} {
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
			if strings.Contains(string(mustRead(t, p.Name)), "{{"+f+"}}") && !strings.Contains(out, "&lt;"+f+"&gt;") {
				t.Errorf("%s: {{%s}} not rendered escaped", p.Name, f)
			}
		}
		if strings.Contains(out, "{{") {
			t.Errorf("%s: placeholder left in output", p.Name)
		}
	}
}

func mustRead(t *testing.T, name string) []byte {
	b, err := defaults.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
