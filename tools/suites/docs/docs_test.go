// Package docs_test checks the project's documentation against the
// repository: README.md, docs/*.md and tools/fastlyhost/README.md.
//
// Three things go stale when code moves and prose does not:
//
//   - links: every relative link and image resolves to a file or folder of
//     the repository, and every #anchor to a heading of its page (as
//     GitHub names headings);
//   - make targets: every `make <target>` the docs name, in inline code or
//     in a code block, is a target of the Makefile;
//   - config keys: every identifier the docs name as code is one the
//     project knows. A config key is a name in the settings table (package
//     settings), from which docs/configuration.md is generated. The docs also name
//     the fields of the visitors' answers, the admin API, the store
//     script, the log lines and the pages' templates; those words are read
//     from the files that define them (see vocabulary). What is left, a
//     backticked snake_case word, a JSON key in code or a `--key=` of a
//     config store command, must be a config key or one of the few names
//     in notKeys. A made-up key, or a key renamed in code and not in the
//     docs, fails.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/settings"
)

// root is the repository, from tools/suites/docs.
var root = filepath.Join("..", "..", "..")

// docFiles are the documents checked, relative to root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", filepath.Join("tools", "fastlyhost", "README.md")}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, rel)
	}
	return files
}

// doc is one document: its prose (code blocks removed), its code blocks,
// and the anchors of its headings.
type doc struct {
	path    string // relative to root
	prose   []line
	code    []line
	anchors map[string]bool
}

// line is a line of a document and its number, for messages.
type line struct {
	n    int
	text string
}

func readDoc(t *testing.T, path string) *doc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return parseDoc(path, string(b))
}

func parseDoc(path, text string) *doc {
	d := &doc{path: path, anchors: map[string]bool{}}
	seen := map[string]int{}
	inCode := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			d.code = append(d.code, line{i + 1, l})
			continue
		}
		d.prose = append(d.prose, line{i + 1, l})
		if m := heading.FindStringSubmatch(l); m != nil {
			a := slug(m[1])
			if n := seen[a]; n > 0 {
				d.anchors[a+"-"+itoa(n)] = true
			} else {
				d.anchors[a] = true
			}
			seen[a]++
		}
	}
	return d
}

var heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// slug is GitHub's anchor for a heading: lower case, markup and
// punctuation dropped (but hyphens and underscores), spaces as hyphens.
func slug(h string) string {
	h = strings.ToLower(h)
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 127 && isLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isLetter keeps letters beyond ASCII (é, ü) as GitHub does, and drops
// symbols such as ÷, –, ×.
func isLetter(r rune) bool {
	return (r >= 0xC0 && r <= 0x24F && r != 0xD7 && r != 0xF7) || (r >= 0x370 && r <= 0x3FF)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// inlineCode removes code spans, so links are only looked for in prose.
var inlineCode = regexp.MustCompile("`[^`]*`")

// link is a Markdown link or image: ](target) with an optional title.
var link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// links returns the targets of the links in a document's prose.
func (d *doc) links() []line {
	var out []line
	for _, l := range d.prose {
		for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(l.text, ""), -1) {
			out = append(out, line{l.n, m[1]})
		}
	}
	return out
}

// brokenLinks returns a message for each relative link in d that does not
// resolve; docs holds every document by path, for anchors.
func brokenLinks(d *doc, read func(path string) (*doc, error)) []string {
	var problems []string
	for _, l := range d.links() {
		target := l.text
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := d.path
		if file != "" {
			path = filepath.Join(filepath.Dir(d.path), filepath.FromSlash(file))
			_, err := os.Stat(filepath.Join(root, path))
			if err != nil {
				problems = append(problems, d.path+":"+itoa(l.n)+": "+target+": no such file")
				continue
			}
		}
		if anchor == "" {
			continue
		}
		if !strings.HasSuffix(path, ".md") {
			problems = append(problems, d.path+":"+itoa(l.n)+": "+target+": an anchor into a file that is not Markdown")
			continue
		}
		to, err := read(path)
		if err != nil {
			problems = append(problems, d.path+":"+itoa(l.n)+": "+target+": "+err.Error())
			continue
		}
		if !to.anchors[anchor] {
			problems = append(problems, d.path+":"+itoa(l.n)+": "+target+": no heading #"+anchor+" in "+path)
		}
	}
	return problems
}

func TestLinksResolve(t *testing.T) {
	cache := map[string]*doc{}
	read := func(path string) (*doc, error) {
		if d, ok := cache[path]; ok {
			return d, nil
		}
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return nil, err
		}
		cache[path] = parseDoc(path, string(b))
		return cache[path], nil
	}
	n := 0
	for _, f := range docFiles(t) {
		d, err := read(f)
		if err != nil {
			t.Fatal(err)
		}
		n += len(d.links())
		for _, p := range brokenLinks(d, read) {
			t.Error(p)
		}
	}
	if n < 50 {
		t.Errorf("only %d links found: is the link pattern still right?", n)
	}
}

// makeCommand is `make` and its target in a command line: flags and
// VAR=value arguments before the target are skipped.
var makeCommand = regexp.MustCompile(`(?:^|[\s;&|(])make((?:\s+(?:-\S+|\w+=\S*))*)\s+([A-Za-z0-9][\w./-]*)`)

// makeTargets returns the targets the document names in code: inline code
// spans and code blocks.
func (d *doc) makeTargets() []line {
	var out []line
	add := func(n int, s string) {
		for _, m := range makeCommand.FindAllStringSubmatch(s, -1) {
			out = append(out, line{n, m[2]})
		}
	}
	for _, l := range d.prose {
		for _, span := range inlineCode.FindAllString(l.text, -1) {
			add(l.n, strings.Trim(span, "`"))
		}
	}
	for _, l := range d.code {
		if i := strings.Index(l.text, "#"); i >= 0 && !strings.Contains(l.text[:i], "make") {
			continue // a comment, or a line with no make before it
		}
		add(l.n, l.text)
	}
	return out
}

// makefileTargets reads the targets the Makefile defines: every name
// before a rule's colon (not :=), variables aside.
func makefileTargets(t *testing.T, makefile string) map[string]bool {
	t.Helper()
	targets := map[string]bool{}
	rule := regexp.MustCompile(`^([^\s:#=$][^:=]*?):([^=]|$)`)
	for _, l := range strings.Split(makefile, "\n") {
		m := rule.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, name := range strings.Fields(m[1]) {
			if !strings.HasPrefix(name, ".") {
				targets[name] = true
			}
		}
	}
	return targets
}

func TestMakeTargetsExist(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := makefileTargets(t, string(b))
	for _, want := range []string{"serve", "test", "bench", "bin/wrconfig"} {
		if !targets[want] {
			t.Fatalf("the Makefile parser missed %q: %v", want, targets)
		}
	}
	n := 0
	for _, f := range docFiles(t) {
		for _, l := range readDoc(t, f).makeTargets() {
			n++
			if !targets[l.text] {
				t.Errorf("%s:%d: make %s: no such target in the Makefile", f, l.n, l.text)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d make commands found: is the pattern still right?", n)
	}
}

// configKeys is every name in the settings table (package settings), from
// which docs/configuration.md is generated: config store keys, room
// settings and event fields. Renamed keys are not among them.
func configKeys(t *testing.T) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for _, table := range [][]settings.Setting{settings.Store[:], settings.Room[:], settings.Event[:]} {
		for _, s := range table {
			keys[s.Name] = true
		}
	}
	return keys
}

// vocabulary is every name the project defines outside its settings that
// the docs also write as code: the visitors' answers (their JSON Schema),
// the admin API (its OpenAPI document), the store script and its protocol
// (Redis fields among them), the log lines, the pages' templates and
// words, and the heartbeat's answer. Each word is a quoted string or JSON
// tag in those files.
func vocabulary(t *testing.T) map[string]bool {
	t.Helper()
	words := map[string]bool{}
	quoted := regexp.MustCompile(`["'{]([a-z][a-z0-9_]*)[",'}]`)
	var files []string
	for _, pattern := range []string{
		"docs/visitor.schema.json", "api/openapi.json",
		"store/line.lua", "store/genline/protocol.go",
		"accesslog/*.go", "templates/*.html", "templates/templates.go",
		"locale/*.go", "edge/session.go",
	} {
		m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil || len(m) == 0 {
			t.Fatalf("no vocabulary file %s (%v): has it moved?", pattern, err)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range quoted.FindAllStringSubmatch(string(b), -1) {
			words[m[1]] = true
		}
	}
	return words
}

// notKeys are names the docs write as code that are neither config keys
// nor in the vocabulary's files: Fastly's and Viceroy's names, the values
// some settings take, and the examples' own names.
var notKeys = map[string]bool{
	// fastly.toml and Viceroy: backends, local_server, host calls.
	"ca_certificate": true, "cert_host": true, "cert_hostname": true, "use_sni": true,
	"client_certificate": true, "first_byte_timeout_ms": true, "between_bytes_timeout_ms": true,
	"fake_valid_fastly_keys": true, "fastly_key_is_valid": true, "from_bytes": true,
	"get_vcpu_ms": true, "prepare_request": true, "service_id": true, "use_default_loopback": true,
	// values of settings (bind_session), and the examples' names.
	"user_agent": true, "ip_prefix": true, "sale_de": true, "wr_requests": true,
	// the stores' names, which the service opens (deploy.md).
	"waiting_room_config": true, "waiting_room_templates": true, "waiting_room_secrets": true,
	// the secret store's entries.
	"upstash_token": true, "signing_keys": true, "admin_password": true, "api_token": true,
	// wrconfig's example of a misspelt key, which it refuses; a Loki label.
	"admin_pth": true, "app": true,
}

// namedAsCode returns the names d writes as code that could be config
// keys: backticked snake_case words, JSON keys in code, and the keys of
// `--key=` options (config store commands).
func (d *doc) namedAsCode() []line {
	var out []line
	snake := regexp.MustCompile("`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`")
	jsonKey := regexp.MustCompile(`[{,]\s*"([a-z][a-z0-9_]*)"\s*:`)
	storeKey := regexp.MustCompile(`config-store-entry .*--key=([a-z][a-z0-9_]*)`)
	for _, l := range d.prose {
		for _, m := range snake.FindAllStringSubmatch(l.text, -1) {
			out = append(out, line{l.n, m[1]})
		}
		for _, span := range inlineCode.FindAllString(l.text, -1) {
			for _, m := range jsonKey.FindAllStringSubmatch(span, -1) {
				out = append(out, line{l.n, m[1]})
			}
		}
	}
	for _, l := range d.code {
		for _, re := range []*regexp.Regexp{jsonKey, storeKey} {
			for _, m := range re.FindAllStringSubmatch(l.text, -1) {
				out = append(out, line{l.n, m[1]})
			}
		}
	}
	return out
}

// unknownNames returns a message for each name d writes as code that is
// not a key, a vocabulary word, nor one of notKeys.
func unknownNames(d *doc, keys, words map[string]bool) []string {
	var problems []string
	for _, l := range d.namedAsCode() {
		name := l.text
		if keys[name] || words[name] || notKeys[name] || strings.HasPrefix(name, "fastly_") {
			continue
		}
		problems = append(problems, d.path+":"+itoa(l.n)+": `"+name+"` is no config key in the settings table, nor a name the project defines")
	}
	return problems
}

func TestConfigKeysExist(t *testing.T) {
	keys := configKeys(t)
	for _, want := range []string{"rooms", "max_active_users", "on_store_error"} {
		if !keys[want] {
			t.Fatalf("the settings table does not name %q: %v", want, sorted(keys))
		}
	}
	words := vocabulary(t)
	// The changelog names the keys a release renamed; no other page may.
	old := map[string]bool{}
	for k := range keys {
		old[k] = true
	}
	for _, r := range settings.Renames {
		old[r.Old] = true
	}
	for _, f := range docFiles(t) {
		known := keys
		switch f {
		case filepath.Join("docs", "configuration.md"):
			continue
		case filepath.Join("docs", "changelog.md"):
			known = old
		}
		for _, p := range unknownNames(readDoc(t, f), known, words) {
			t.Error(p)
		}
	}
}

func sorted(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestTheChecksCanFail feeds each check a document with one fault of its
// kind, and one without.
func TestTheChecksCanFail(t *testing.T) {
	keys := map[string]bool{"rooms": true, "max_active_users": true, "room": true}
	words := map[string]bool{"now_serving": true}
	targets := map[string]bool{"serve": true}
	readme := parseDoc("README.md", "# Title\n\n## A section\n")
	cases := []struct {
		name, text string
		faults     int
	}{
		{"good", "# T\n\nSee [it](../README.md#a-section), [here](#t) and `max_active_users`; `now_serving`.\n\n```sh\nmake serve\n```\n", 0},
		{"a missing file", "See [it](no-such-file.md).\n", 1},
		{"a missing anchor", "# T\n\nSee [it](#no-such-heading).\n", 1},
		{"a missing anchor in another page", "See [it](../README.md#nowhere).\n", 1},
		{"a made-up key in prose", "Set `max_active_visitors`.\n", 1},
		{"a made-up key in JSON", "```json\n{\"max_active_users\":3,\"max_visitors\":3}\n```\n", 1},
		{"a made-up config store key", "```sh\nfastly config-store-entry update --key=room_list --value=a\n```\n", 1},
		{"a made-up make target", "Run `make serve-all`.\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := parseDoc(filepath.Join("docs", "x.md"), c.text)
			read := func(path string) (*doc, error) {
				if path == d.path {
					return d, nil
				}
				return readme, nil
			}
			faults := len(brokenLinks(d, read)) + len(unknownNames(d, keys, words))
			for _, l := range d.makeTargets() {
				if !targets[l.text] {
					faults++
				}
			}
			if faults != c.faults {
				t.Errorf("%d faults found, want %d", faults, c.faults)
			}
		})
	}
}
