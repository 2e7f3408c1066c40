package edgerules

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFile(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // part of the one violation expected; "" for none
	}{
		{"the TinyGo 0.33 miscompile", "package p\nimport (\"crypto/sha1\"; \"encoding/hex\")\nvar sha = hex.EncodeToString(sha1.New().Sum(nil))\n", "var sha is computed"},
		{"an immediately called function", "package p\nvar v = func() int { return 1 }()\n", "var v is computed"},
		{"fmt.Errorf", "package p\nimport \"fmt\"\nvar e = fmt.Errorf(\"%w\", nil)\n", "var e is computed"},
		{"a call inside a composite literal", "package p\nimport \"strings\"\nvar m = map[string]string{\"a\": strings.ToLower(\"A\")}\n", "var m is computed"},
		{"errors.New of a variable", "package p\nimport \"errors\"\nvar s = \"x\"\nvar e = errors.New(s)\n", "var e is computed"},
		{"net/http", "package p\nimport _ \"net/http\"\n", "imports net/http"},
		{"html/template", "package p\nimport _ \"html/template\"\n", "imports html/template"},
		{"errors.New of a literal", "package p\nimport \"errors\"\nvar e = errors.New(\"x\")\n", ""},
		{"literals", "package p\nvar (\n\ta = 1\n\tb = []string{\"x\", \"y\"}\n\tc = struct{ n int }{n: 2 * a}\n\td string\n)\n", ""},
		{"a function value", "package p\nvar f = func() int { return 1 }\n", ""},
		{"net/http outside wasip1", "//go:build !wasip1\n\npackage p\nimport _ \"net/http\"\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := CheckFile("p.go", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && len(vs) != 0:
				t.Fatalf("want no violation, got %v", vs)
			case tc.want != "" && (len(vs) != 1 || !strings.Contains(vs[0].Rule, tc.want)):
				t.Fatalf("want one violation %q, got %v", tc.want, vs)
			}
		})
	}
}

// TestEdgeModule holds the edge module to the rules.
func TestEdgeModule(t *testing.T) {
	files, vs, err := CheckTree(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("checked %d files: the edge module's sources were not found", files)
	}
	for _, v := range vs {
		t.Error(v)
	}
}
