package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// setupSection is fastly.toml's [setup] as the Fastly CLI reads it: the
// structures of fastly/cli's pkg/manifest/setup.go, field for field. The
// CLI's decoder drops keys it does not know without a word; decodeSetup
// reports them.
type setupSection struct {
	Backends     map[string]*setupBackend     `toml:"backends"`
	ConfigStores map[string]*setupConfigStore `toml:"config_stores"`
	Loggers      map[string]*setupLogger      `toml:"log_endpoints"`
	ObjectStores map[string]*setupKVStore     `toml:"object_stores"`
	KVStores     map[string]*setupKVStore     `toml:"kv_stores"`
	SecretStores map[string]*setupSecretStore `toml:"secret_stores"`
	Products     map[string]any               `toml:"products"`
}

type setupBackend struct {
	Address     string `toml:"address"`
	Port        int    `toml:"port"`
	Description string `toml:"description"`
}

type setupConfigStore struct {
	Items       map[string]setupItem `toml:"items"`
	Description string               `toml:"description"`
}

type setupItem struct {
	Value       string `toml:"value"`
	Description string `toml:"description"`
}

type setupLogger struct {
	Provider string `toml:"provider"`
}

type setupKVStore struct {
	File        string                 `toml:"file"`
	Items       map[string]setupKVItem `toml:"items"`
	Description string                 `toml:"description"`
}

type setupKVItem struct {
	File        string `toml:"file"`
	Value       string `toml:"value"`
	Description string `toml:"description"`
}

// setupSecretStore has no value field: the CLI never reads a secret from
// the manifest. It asks for each one and stops on a blank answer ("value
// cannot be blank"), deleting the service it just created; with
// --non-interactive it cannot ask, so every entry is blank.
type setupSecretStore struct {
	Entries     map[string]setupSecretEntry `toml:"entries"`
	Description string                      `toml:"description"`
}

type setupSecretEntry struct {
	Description string `toml:"description"`
}

// TestSetupSection checks fastly.toml's [setup] against what the Fastly CLI
// does with it (pkg/commands/compute/setup): a backend without an address
// is offered 127.0.0.1 and a config item without a value "example", and
// pressing Enter deploys either; every secret must be typed. So each
// default either works as it is or is a reserved example name, each store
// and secret is one the code opens, and the Upstash host is asked once.
func TestSetupSection(t *testing.T) {
	s := decodeSetup(t, filepath.Join(repoRoot, "fastly.toml"))

	// platform's originBackend and upstashBackend.
	if got := sortedKeys(s.Backends); !reflect.DeepEqual(got, []string{"origin", "upstash"}) {
		t.Errorf("backends %v, want origin and upstash", got)
	}
	for name, b := range s.Backends {
		switch {
		case b.Description == "":
			t.Errorf("backend %s has no description: the CLI's prompt would not say what to type", name)
		case b.Address == "":
			t.Errorf("backend %s has no address: the CLI would offer (and deploy on Enter) 127.0.0.1", name)
		case !edge.IsPlaceholderHost(b.Address):
			// Pressing Enter must not send visitors, or the Upstash token,
			// to whoever owns a real host.
			t.Errorf("backend %s's default %q is not a reserved example name", name, b.Address)
		case b.Port != 443:
			t.Errorf("backend %s: port %d, want 443 (TLS)", name, b.Port)
		}
	}

	if got := sortedKeys(s.ConfigStores); !reflect.DeepEqual(got, []string{edge.ConfigStore}) {
		t.Fatalf("config stores %v, want %s", got, edge.ConfigStore)
	}
	cfg := s.ConfigStores[edge.ConfigStore]
	if _, ok := cfg.Items[edge.KeyUpstashURL]; ok {
		t.Errorf("[setup] asks for %s: the Upstash host would be typed twice (the upstash backend has it)", edge.KeyUpstashURL)
	}
	for key, item := range cfg.Items {
		switch {
		case item.Value == "":
			t.Errorf("config item %s has no value: the CLI would deploy \"example\" on Enter", key)
		case len(item.Value) > 8000:
			t.Errorf("config item %s: %d characters, over the config store's 8,000", key, len(item.Value))
		case item.Description == "":
			t.Errorf("config item %s has no description", key)
		}
	}
	names, err := queue.ParseRoomIndex(cfg.Items[edge.KeyRooms].Value)
	if err != nil || len(names) == 0 {
		t.Fatalf("the default room index %q: %v", cfg.Items[edge.KeyRooms].Value, err)
	}
	for _, name := range names {
		item, ok := cfg.Items[edge.KeyRoomPrefix+name]
		if !ok {
			t.Errorf("room %s is listed but [setup] has no %s%s", name, edge.KeyRoomPrefix, name)
			continue
		}
		if _, err := queue.ParseRoom(name, []byte(item.Value)); err != nil {
			t.Errorf("the default room: %v", err)
		}
	}

	if got := sortedKeys(s.KVStores); !reflect.DeepEqual(got, []string{edge.TemplateStore}) {
		t.Errorf("KV stores %v, want %s", got, edge.TemplateStore)
	} else if kv := s.KVStores[edge.TemplateStore]; len(kv.Items) != 0 || kv.File != "" || kv.Description == "" {
		t.Errorf("the templates store should start empty (the built-in pages serve) and say so: %+v", kv)
	}

	if got := sortedKeys(s.SecretStores); !reflect.DeepEqual(got, []string{edge.SecretStore}) {
		t.Fatalf("secret stores %v, want %s", got, edge.SecretStore)
	}
	sec := s.SecretStores[edge.SecretStore]
	want := []string{edge.SecretAdminPassword, edge.SecretSigningKeys, edge.SecretUpstashToken}
	if got := sortedKeys(sec.Entries); !reflect.DeepEqual(got, want) {
		t.Errorf("secret entries %v, want %v", got, want)
	}
	if !strings.Contains(sec.Description, "blank") {
		t.Errorf("the secret store's description should warn that no value may be blank: %q", sec.Description)
	}
	for name, e := range sec.Entries {
		if len(e.Description) < 40 {
			t.Errorf("secret %s: description %q does not say what to paste", name, e.Description)
		}
	}
	// The signing keys' description carries the command that makes them.
	generate := regexp.MustCompile(`echo "k1:\$\(openssl rand -base64 32\)"`).FindString(sec.Entries[edge.SecretSigningKeys].Description)
	if generate == "" {
		t.Fatalf("the signing_keys description has no generator one-liner: %q", sec.Entries[edge.SecretSigningKeys].Description)
	}
	checkKeyGenerator(t, generate)

	// The CLI only names a log endpoint (it cannot create one); it is the
	// one the local config logs to.
	dev, err := fastlyhost.LoadManifest(filepath.Join(repoRoot, "fastly.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sortedKeys(s.Loggers), []string{dev.ConfigStores[edge.ConfigStore][edge.KeyLogEndpoint]}; !reflect.DeepEqual(got, want) {
		t.Errorf("log endpoints %v, want %v (devconfig.json's %s)", got, want, edge.KeyLogEndpoint)
	}

	if len(s.ObjectStores)+len(s.Products) != 0 {
		t.Errorf("[setup] asks for object stores or products the service does not use")
	}
}

// checkKeyGenerator runs a documented key-generating one-liner twice: each
// run must print a key set the service accepts, and a different one.
func checkKeyGenerator(t *testing.T, command string) {
	t.Helper()
	var sets []string
	for i := 0; i < 2; i++ {
		out, err := exec.Command("sh", "-c", command).Output()
		if err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		if _, err := queue.ParseKeySet(string(out)); err != nil {
			t.Fatalf("%s printed %q, which the service refuses: %v", command, out, err)
		}
		sets = append(sets, string(out))
	}
	if sets[0] == sets[1] {
		t.Fatalf("%s printed the same key set twice", command)
	}
}

// TestDevSecretsAreRefusedWhenDeployed: the secrets fastly.toml's
// [local_server] publishes are exactly those a deployed service refuses.
func TestDevSecretsAreRefusedWhenDeployed(t *testing.T) {
	m, err := fastlyhost.LoadManifest(filepath.Join(repoRoot, "fastly.toml"))
	if err != nil {
		t.Fatal(err)
	}
	secrets := m.SecretStores[devstack.SecretStore]
	if len(secrets) != 4 {
		t.Fatalf("[local_server] secrets %v", sortedKeys(secrets))
	}
	for name, value := range secrets {
		if !edge.IsDevSecret(name, value) {
			t.Errorf("[local_server] secret %s is public, but a deployed service would accept it", name)
		}
	}
}

// startWith starts the stack with one room over the whole site and adjust
// applied to the manifest.
func startWith(t *testing.T, adjust func(*fastlyhost.Manifest)) *env {
	t.Helper()
	return startStack(t, loadTimeout, room, adjust)
}

// TestUnsetSettingsRefusedThroughTheWasm runs the wasm under test with each
// thing an operator may have left unset: every request gets the 503 page
// naming it, and logs one line naming it and a command the Fastly CLI
// accepts to set it.
func TestUnsetSettingsRefusedThroughTheWasm(t *testing.T) {
	cases := []struct {
		name    string
		adjust  func(*fastlyhost.Manifest)
		path    string
		setting string
		fix     string
	}{
		{"upstash_url left at the old placeholder", func(m *fastlyhost.Manifest) {
			m.ConfigStores[devstack.ConfigStore][edge.KeyUpstashURL] = "https://your-database.upstash.io"
		}, "/", "config upstash_url", "fastly config-store-entry delete"},
		{"signing keys missing", func(m *fastlyhost.Manifest) {
			delete(m.SecretStores[devstack.SecretStore], edge.SecretSigningKeys)
		}, "/", "secret signing_keys", "openssl rand -base64 32"},
		{"signing keys not a key set", func(m *fastlyhost.Manifest) {
			m.SecretStores[devstack.SecretStore][edge.SecretSigningKeys] = []byte("changeme")
		}, "/", "secret signing_keys", "is not a key set"},
		{"upstash token missing", func(m *fastlyhost.Manifest) {
			delete(m.SecretStores[devstack.SecretStore], edge.SecretUpstashToken)
		}, "/", "secret upstash_token", "--name=upstash_token"},
		{"config store linked under another name", func(m *fastlyhost.Manifest) {
			m.ConfigStores["waiting_room_config_2"] = m.ConfigStores[devstack.ConfigStore]
			delete(m.ConfigStores, devstack.ConfigStore)
		}, "/static/app.css", edge.ConfigStore, "--name=" + edge.ConfigStore},
		{"secret store linked under another name", func(m *fastlyhost.Manifest) {
			delete(m.SecretStores, devstack.SecretStore)
		}, "/", edge.SecretStore, "--name=" + edge.SecretStore},
	}
	commands := newCLICommands(t)
	logged := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := startWith(t, tc.adjust)
			v := &visitor{e: e}
			for i := 1; i <= 2; i++ {
				a := v.get(tc.path)
				if a.status != 503 || !strings.Contains(a.body, "Not set up yet") || !strings.Contains(a.body, "set "+tc.setting) {
					t.Fatalf("request %d: %d %s; want the 503 setup page naming %q", i, a.status, a.body, tc.setting)
				}
				if a.header.Get("Cache-Control") != "no-store" {
					t.Fatalf("the setup page may be cached: %v", a.header)
				}
				lines := setupLines(e.logs.String())
				if len(lines) != i {
					t.Fatalf("after %d requests, %d setup log lines:\n%s", i, len(lines), e.logs)
				}
				if l := lines[i-1]; !strings.Contains(l, tc.setting) || !strings.Contains(l, tc.fix) {
					t.Fatalf("log line %q should name %q and %q", l, tc.setting, tc.fix)
				}
				if commands.check(t, lines[i-1]) == 0 {
					t.Fatalf("log line %q holds no fastly command", lines[i-1])
				}
				logged[lines[i-1]] = true
			}
		})
	}
	// The deploy guide's example is a line the service really logs.
	example := ""
	for _, l := range strings.Split(docSection(t, "deploy.md", ""), "\n") {
		if strings.HasPrefix(l, "setup: ") {
			example = l
		}
	}
	if !logged[example] {
		t.Errorf("docs/deploy.md's example log line %q is not one the service logs", example)
	}
}

// docSection returns the section (## heading) of that name of a document
// under docs/, or the whole document when heading is empty.
func docSection(t *testing.T, doc, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", doc))
	if err != nil {
		t.Fatal(err)
	}
	if heading == "" {
		return string(b)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("docs/%s has no %s section", doc, heading)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	return section
}

// shellComment is a comment after a command in the docs' code blocks.
var shellComment = regexp.MustCompile(`\s{2,}#.*$`)

// TestReadmeDeployCommands checks every fastly command the deploy guide
// (docs/deploy.md) gives (in code blocks and inline) against the Fastly CLI's help,
// and runs its key-generating one-liners.
func TestReadmeDeployCommands(t *testing.T) {
	section := docSection(t, "deploy.md", "")
	n := newCLICommands(t).checkSection(t, section)
	if n < 20 {
		t.Errorf("found only %d fastly commands in the Deploy section", n)
	}
	t.Logf("%d fastly commands checked against the CLI's help", n)
	// The room definitions it shows are ones the service accepts.
	rooms := regexp.MustCompile(`--key=room\.([a-z0-9_-]+) --value='([^']*)'`).FindAllStringSubmatch(section, -1)
	if len(rooms) == 0 {
		t.Errorf("the Deploy section shows no room definition")
	}
	for _, m := range rooms {
		if _, err := queue.ParseRoom(m[1], []byte(m[2])); err != nil {
			t.Errorf("the Deploy section's room %s: %v", m[1], err)
		}
	}
	for _, generator := range []string{`echo "k1:$(openssl rand -base64 32)"`, `echo "k$(date +%s):$(openssl rand -base64 32)"`} {
		if !strings.Contains(section, strings.TrimPrefix(generator, "echo ")) {
			t.Errorf("the Deploy section no longer shows %s", generator)
			continue
		}
		checkKeyGenerator(t, generator)
	}
}

// TestReadmeLogsCommands checks the fastly commands that create a log
// endpoint in docs/operations.md's Logs section against the Fastly CLI's help.
func TestReadmeLogsCommands(t *testing.T) {
	if n := newCLICommands(t).checkSection(t, docSection(t, "operations.md", "Logs")); n < 4 {
		t.Errorf("found only %d fastly commands in the Logs section", n)
	}
}

// TestUpstashURLOptionalThroughTheWasm: with no upstash_url in the config
// store, the wasm reaches Upstash through the upstash backend alone.
func TestUpstashURLOptionalThroughTheWasm(t *testing.T) {
	e := startWith(t, func(m *fastlyhost.Manifest) {
		delete(m.ConfigStores[devstack.ConfigStore], edge.KeyUpstashURL)
	})
	a := (&visitor{e: e}).get("/", "Accept", "application/json")
	if a.status != 200 || len(setupLines(e.logs.String())) != 0 || e.restCalls() == 0 {
		t.Fatalf("%d %s; the store was not reached:\n%s", a.status, a.body, e.logs)
	}
}

// setupLines returns the service's log lines that say what to set.
func setupLines(logs string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if i := strings.Index(l, "setup: "); i >= 0 {
			out = append(out, l[i:])
		}
	}
	return out
}

// cliCommands checks documented `fastly …` commands against the Fastly
// CLI's own help: each command must exist, be listed by its parent (the CLI
// hides its deprecated aliases, such as `fastly resource-link`), and take
// every flag given.
type cliCommands struct {
	env  []string
	help map[string]string
}

func newCLICommands(t *testing.T) *cliCommands {
	return &cliCommands{env: cliEnv(t), help: map[string]string{}}
}

// checkSection checks the fastly commands of a section of the docs, in its
// code blocks and inline, and counts them.
func (c *cliCommands) checkSection(t *testing.T, section string) int {
	t.Helper()
	n := 0
	inBlock := false
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			n += c.check(t, shellComment.ReplaceAllString(line, ""))
			continue
		}
		for _, m := range regexp.MustCompile("`(fastly [^`]*)`").FindAllStringSubmatch(line, -1) {
			n += c.check(t, m[1])
		}
	}
	return n
}

// check finds each fastly command in text, fails t on any the CLI would
// refuse, and counts them.
func (c *cliCommands) check(t *testing.T, text string) int {
	t.Helper()
	n, problems := c.problems(t, text)
	for _, p := range problems {
		t.Errorf("%s (in %q)", p, text)
	}
	return n
}

// problems finds each fastly command in text and says what is wrong with it.
func (c *cliCommands) problems(t *testing.T, text string) (n int, problems []string) {
	t.Helper()
	for _, cmd := range fastlyCommands(text) {
		n++
		name := strings.Join(cmd.words, " ")
		help := c.helpFor(t, cmd.words)
		// A command's --help may name it by a deprecated alias (16.1.0's
		// service logging commands say "fastly logging ..."); `fastly help`
		// names it as typed.
		usage := regexp.MustCompile(`USAGE\n  fastly (\[<flags>\] )?` + regexp.QuoteMeta(name) + `[ \n]`)
		if !usage.MatchString(help) && !usage.MatchString(c.run(t, append([]string{"help"}, cmd.words...))) {
			problems = append(problems, "`fastly "+name+"` is not a Fastly CLI command")
			continue
		}
		parent, last := cmd.words[:len(cmd.words)-1], cmd.words[len(cmd.words)-1]
		if !regexp.MustCompile(`\n  ` + regexp.QuoteMeta(last) + `\s`).MatchString(c.helpFor(t, parent)) {
			problems = append(problems, "`fastly "+name+"` is hidden (a deprecated alias)")
		}
		for _, f := range cmd.flags {
			if !strings.Contains(help, f+"=") && !regexp.MustCompile(regexp.QuoteMeta(f)+`\s`).MatchString(help) {
				problems = append(problems, "`fastly "+name+"` has no flag "+f)
			}
		}
	}
	return n, problems
}

// helpFor returns `fastly <words> --help`, once per command.
func (c *cliCommands) helpFor(t *testing.T, words []string) string {
	t.Helper()
	return c.run(t, append(append([]string{}, words...), "--help"))
}

// run runs the CLI with args, once, and returns what it printed.
func (c *cliCommands) run(t *testing.T, args []string) string {
	t.Helper()
	key := strings.Join(args, " ")
	if h, ok := c.help[key]; ok {
		return h
	}
	cmd := exec.Command(fastlyCLI(t), args...)
	cmd.Env = c.env
	out, _ := cmd.CombinedOutput() // an unknown command's error is in its output
	c.help[key] = string(out)
	return c.help[key]
}

// fastlyCommand is one `fastly …` invocation found in text.
type fastlyCommand struct {
	words []string // the command, e.g. ["secret-store-entry", "create"]
	flags []string // its long flags, e.g. ["--name", "--stdin"]
}

// commandWord is a word of a CLI command's name.
var commandWord = regexp.MustCompile(`^[a-z][a-z-]*$`)

// fastlyCommands finds the fastly invocations in a line of shell or prose.
// Quoted strings, <placeholders> and `inline code` are single tokens, so a
// placeholder holding a command is checked on its own.
func fastlyCommands(text string) []fastlyCommand {
	var out []fastlyCommand
	tokens := shellTokens(text)
	for i := 0; i < len(tokens); i++ {
		if strings.TrimLeft(tokens[i], "`$(") != "fastly" {
			if inner := strings.Trim(tokens[i], "`<>\"'"); inner != tokens[i] && strings.Contains(inner, "fastly ") {
				out = append(out, fastlyCommands(inner)...)
			}
			continue
		}
		var cmd fastlyCommand
		j := i + 1
		for ; j < len(tokens) && commandWord.MatchString(tokens[j]); j++ {
			cmd.words = append(cmd.words, tokens[j])
		}
		for ; j < len(tokens) && strings.HasPrefix(tokens[j], "-"); j++ {
			tok := strings.TrimRight(tokens[j], ";`)")
			name, value, _ := strings.Cut(tok, "=")
			if strings.HasPrefix(name, "--") {
				cmd.flags = append(cmd.flags, name)
			}
			if strings.Contains(value, "fastly ") {
				out = append(out, fastlyCommands(strings.Trim(value, "<>`\"'"))...)
			}
			if tok != tokens[j] {
				j++
				break
			}
		}
		if len(cmd.words) > 0 {
			out = append(out, cmd)
		}
		i = j - 1
	}
	return out
}

// shellTokens splits text on blanks outside "quotes", <placeholders> and
// `code`.
func shellTokens(text string) []string {
	var tokens []string
	var cur strings.Builder
	var closer rune
	for _, r := range text {
		switch {
		case closer != 0:
			cur.WriteRune(r)
			if r == closer {
				closer = 0
			}
		case r == '"' || r == '`':
			closer = r
			cur.WriteRune(r)
		case r == '<':
			closer = '>'
			cur.WriteRune(r)
		case r == ' ' || r == '\t' || r == '\n':
			if cur.Len() > 0 {
				tokens = append(tokens, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		tokens = append(tokens, cur.String())
	}
	return tokens
}

// TestCommandChecker: the checker finds commands inside the forms the log
// lines and the docs use, and refuses what the CLI would refuse.
func TestCommandChecker(t *testing.T) {
	line := `setup: secret signing_keys is missing; set it with: echo "k1:$(openssl rand -base64 32)" | ` +
		"fastly secret-store-entry create --recreate-allow --stdin --store-id=<id of waiting_room_secrets in `fastly secret-store list`> --name=signing_keys; " +
		`then H=<your host>; fastly service backend update --version=latest --address="$H" --override-host="$H"`
	got := fastlyCommands(line)
	want := []fastlyCommand{
		{[]string{"secret-store", "list"}, nil},
		{[]string{"secret-store-entry", "create"}, []string{"--recreate-allow", "--stdin", "--store-id", "--name"}},
		{[]string{"service", "backend", "update"}, []string{"--version", "--address", "--override-host"}},
	}
	sortCommands(got)
	sortCommands(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("found %+v\nwant  %+v", got, want)
	}
	c := newCLICommands(t)
	if n, problems := c.problems(t, line); n != 3 || len(problems) != 0 {
		t.Fatalf("%d commands, problems %q", n, problems)
	}
	for text, want := range map[string]string{
		"fastly secret-store-entry create --name=x --value=y":          "has no flag --value",
		"fastly resource-link create --resource-id=x --version=latest": "hidden",
		"fastly config-store-entry upsert --key=k":                     "not a Fastly CLI command",
	} {
		if _, problems := c.problems(t, text); len(problems) != 1 || !strings.Contains(problems[0], want) {
			t.Errorf("%q: problems %q, want one saying %q", text, problems, want)
		}
	}
}

func sortCommands(cmds []fastlyCommand) {
	sort.Slice(cmds, func(i, j int) bool { return strings.Join(cmds[i].words, " ") < strings.Join(cmds[j].words, " ") })
}
