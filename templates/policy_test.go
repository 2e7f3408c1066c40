package templates

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// inlineBodies are the bodies of a rendered page's inline elements called
// tag, found the plain way.
func inlineBodies(page, tag string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?is)<`+tag+`\b[^>]*>(.*?)</`+tag).FindAllStringSubmatch(page, -1) {
		if m[1] != "" {
			out = append(out, m[1])
		}
	}
	return out
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// TestPolicyHashesTheRenderedPage: every inline script and style of each
// default page, as rendered with a theme, is allowed by its hash in the
// page's policy, and the policy allows nothing else inline.
func TestPolicyHashesTheRenderedPage(t *testing.T) {
	theme := ":root{--wr-bg:#101418;--wr-fg:#ffffff}"
	for _, p := range defaultPages {
		tpl, err := p.Default()
		if err != nil {
			t.Fatal(err)
		}
		values := map[string]string{"theme": theme, "title": "<script>alert(1)</script>"}
		page, policy := tpl.Render(values), tpl.Policy(theme)
		directives := map[string]string{}
		for _, d := range strings.Split(policy, ";") {
			name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
			directives[name] = value
		}
		for tag, directive := range map[string]string{"script": "script-src", "style": "style-src"} {
			var want []string
			if tag == "style" {
				want = append(want, "'self'")
			}
			for _, body := range inlineBodies(page, tag) {
				want = append(want, sha(body))
			}
			if len(want) == 0 {
				want = append(want, "'none'")
			}
			if got := directives[directive]; got != strings.Join(want, " ") {
				t.Errorf("%s: %s %s, want %s", p.Name, directive, got, strings.Join(want, " "))
			}
		}
		if strings.Contains(policy, "unsafe") || directives["default-src"] != "'none'" || directives["connect-src"] != "'self'" ||
			directives["frame-ancestors"] != "'none'" || directives["img-src"] != "'self' https: data:" {
			t.Errorf("%s: policy %s", p.Name, policy)
		}
	}
}

func TestInlineRules(t *testing.T) {
	page := Page{Name: "t.html", Fields: []string{"a", "theme"}}
	tests := []struct {
		name, src, wantErr string
		scripts, styles    int
		themed             bool
	}{
		{"none", "<p>{{a}}</p>", "", 0, 0, false},
		{"script and style", "<style>p{}</style><script>1</script><SCRIPT type=module>2</SCRIPT >", "", 2, 1, false},
		{"external script", `<script src="/x.js"></script>`, "", 0, 0, false},
		{"theme", "<style>{{theme}}</style>", "", 0, 0, true},
		{"includes", "<style>{{> page.css}}</style><script>{{>page.js}}</script>", "", 1, 1, false},
		{"not a script tag", "<scripts>{{a}}</scripts><styled>{{a}}", "", 0, 0, false},
		{"name in script", "<script>var a = '{{a}}'</script>", "a {{name}} inside the <script> at byte 0", 0, 0, false},
		{"name in style", "<p><style>p{color:{{a}}}</style>", "inside the <style> at byte 3", 0, 0, false},
		{"theme among rules", "<style>p{} {{theme}}</style>", "inside the <style>", 0, 0, false},
		{"theme in script", "<script>{{theme}}</script>", "inside the <script>", 0, 0, false},
		{"open tag", "<script type=x", "the <script> tag at byte 0 is never closed", 0, 0, false},
		{"unclosed element", "<style>p{}", "has no </style>", 0, 0, false},
		{"unknown include", "{{> evil.js}}", "unknown include {{> evil.js}}", 0, 0, false},
		{"open include", "{{> page.js", "never closed", 0, 0, false},
	}
	for _, tc := range tests {
		tpl, err := page.Parse(tc.src)
		if tc.wantErr != "" {
			if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(tpl.scripts) != tc.scripts || len(tpl.styles) != tc.styles || tpl.themed != tc.themed {
			t.Errorf("%s: %d scripts, %d styles, themed %v", tc.name, len(tpl.scripts), len(tpl.styles), tpl.themed)
		}
	}
}
