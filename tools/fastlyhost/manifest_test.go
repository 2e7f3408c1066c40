package fastlyhost

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "fastly.toml")
}

func TestLoadManifestForms(t *testing.T) {
	t.Setenv("WR_TEST_SECRET", "from-env")
	path := writeFiles(t, map[string]string{
		"fastly.toml": `
[local_server.backends.origin]
url = "http://127.0.0.1:8080/base"
override_host = "example.com"
[local_server.config_stores.inline]
format = "inline-toml"
[local_server.config_stores.inline.contents]
a = "1"
[local_server.config_stores.fromfile]
file = "config.json"
format = "json"
[local_server.kv_stores]
arr = [{ key = "d", data = "inline", metadata = "m" }, { key = "f", file = "value.txt" }, { key = "p", path = "value.txt" }]
fromfile = { file = "kv.json", format = "json" }
[local_server.secret_stores]
arr = [{ key = "d", data = "s1" }, { key = "f", file = "value.txt" }, { key = "e", env = "WR_TEST_SECRET" }]
fromfile = { file = "secrets.json", format = "json" }
[local_server.geolocation]
format = "inline-toml"
[local_server.geolocation.addresses."127.0.0.1"]
country_code = "NL"
`,
		"config.json":  `{"b":"2"}`,
		"value.txt":    "file value",
		"kv.json":      `{"plain":"p","rich":{"data":"r","metadata":"rm"}}`,
		"secrets.json": `{"x":"y"}`,
	})
	m, err := LoadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want string
	}{
		{"backend url", m.Backends["origin"].URL.String(), "http://127.0.0.1:8080/base"},
		{"override host", m.Backends["origin"].OverrideHost, "example.com"},
		{"inline config", m.ConfigStores["inline"]["a"], "1"},
		{"json config", m.ConfigStores["fromfile"]["b"], "2"},
		{"kv data", string(m.KVStores["arr"]["d"].Data), "inline"},
		{"kv metadata", m.KVStores["arr"]["d"].Metadata, "m"},
		{"kv file", string(m.KVStores["arr"]["f"].Data), "file value"},
		{"kv path alias", string(m.KVStores["arr"]["p"].Data), "file value"},
		{"kv json string", string(m.KVStores["fromfile"]["plain"].Data), "p"},
		{"kv json entry", m.KVStores["fromfile"]["rich"].Metadata, "rm"},
		{"secret data", string(m.SecretStores["arr"]["d"]), "s1"},
		{"secret file", string(m.SecretStores["arr"]["f"]), "file value"},
		{"secret env", string(m.SecretStores["arr"]["e"]), "from-env"},
		{"secret json", string(m.SecretStores["fromfile"]["x"]), "y"},
		{"geo", m.Geo["127.0.0.1"]["country_code"].(string), "NL"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}

// TestLoadManifestRefusesWhatViceroyRefuses feeds manifests Viceroy's
// src/config/*.rs refuses; each must fail at load with a message naming the
// setting, in Viceroy's words where it has them.
func TestLoadManifestRefusesWhatViceroyRefuses(t *testing.T) {
	tests := []struct{ name, toml, want string }{
		{"not toml", "not toml", "fastly.toml"},
		{"manifest version too new", "manifest_version = 4", "unsupported manifest version 4; max supported version is 3"},
		{"backend url not absolute", "[local_server.backends.x]\nurl = \"not a url\"", "local_server.backends.x: invalid url"},
		{"backend without url", "[local_server.backends.x]\noverride_host = \"h\"", "local_server.backends.x: missing 'url' field"},
		{"backend key misspelt", "[local_server.backends.x]\nurl = \"http://o/\"\noveride_host = \"h\"", "local_server.backends.x: unrecognized key 'overide_host'"},
		{"backend override_host empty", "[local_server.backends.x]\nurl = \"http://o/\"\noverride_host = \" \"", "'override_host' field is empty"},
		{"backend override_host not a string", "[local_server.backends.x]\nurl = \"http://o/\"\noverride_host = 1", "'override_host' field was not a string"},
		{"backends not a table of tables", "[local_server.backends]\nx = \"http://o/\"", "local_server.backends.x: definition was not provided as a TOML table"},
		{"config contents without format", "[local_server.config_stores.c.contents]\nk = \"v\"", "local_server.config_stores.c: missing 'format' field"},
		{"config format empty", "[local_server.config_stores.c]\nformat = \"\"", "'format' field is empty"},
		{"config format unknown", "[local_server.config_stores.c]\nformat = \"yaml\"", "'yaml' is not a valid format for the dictionary"},
		{"config inline without contents", "[local_server.config_stores.c]\nformat = \"inline-toml\"", "missing 'contents' field"},
		{"config inline with file", "[local_server.config_stores.c]\nformat = \"inline-toml\"\nfile = \"c.json\"\ncontents = {}", "unrecognized key 'file'"},
		{"config inline value not a string", "[local_server.config_stores.c]\nformat = \"inline-toml\"\ncontents = { k = 1 }", "inline dictionary value was not a string"},
		{"config json without file", "[local_server.config_stores.c]\nformat = \"json\"", "missing 'file' field"},
		{"config json with contents", "[local_server.config_stores.c]\nformat = \"json\"\nfile = \"c.json\"\ncontents = {}", "unrecognized key 'contents'"},
		{"config json missing", "[local_server.config_stores.c]\nfile = \"missing.json\"\nformat = \"json\"", "local_server.config_stores.c: missing.json"},
		{"config json not an object", "[local_server.config_stores.c]\nfile = \"list.json\"\nformat = \"json\"", "expected to contain a single JSON Object"},
		{"config json value not a string", "[local_server.config_stores.c]\nfile = \"number.json\"\nformat = \"json\"", "Item value under key named 'n'"},
		{"config value too long", "[local_server.config_stores.c]\nformat = \"inline-toml\"\n[local_server.config_stores.c.contents]\nk = \"" + strings.Repeat("v", 8001) + "\"", "Item value named 'k' is too long, max size is 8000"},
		{"config store named twice", "[local_server.config_stores.c]\nformat = \"inline-toml\"\ncontents = {}\n[local_server.dictionaries.d]\nformat = \"inline-toml\"\ncontents = {}", "local_server.dictionaries and local_server.config_stores are the same setting"},
		{"kv entry with file and data", "[local_server.kv_stores]\nk = [{ key = \"a\", file = \"value.txt\", data = \"x\" }]", "local_server.kv_stores.k: The `file` and `data` keys for the object `a` are set. Only one can be used."},
		{"kv entry with path and data", "[local_server.kv_stores]\nk = [{ key = \"a\", path = \"value.txt\", data = \"x\" }]", "The `file` and `data` keys for the object `a` are set"},
		{"kv entry without value", "[local_server.kv_stores]\nk = [{ key = \"a\", metadata = \"m\" }]", "The `file` or `data` key for the object `a` is not set"},
		{"kv entry without key", "[local_server.kv_stores]\nk = [{ data = \"x\" }]", "The `key` key for an object is not set"},
		{"kv key invalid", "[local_server.kv_stores]\nk = [{ key = \"a?b\", data = \"x\" }]", "Invalid `key` value used: Keys for objects cannot contain a `?`"},
		{"kv metadata not a string", "[local_server.kv_stores]\nk = [{ key = \"a\", data = \"x\", metadata = 1 }]", "The `metadata` value for the object `a` is not a string."},
		{"kv file without format", "[local_server.kv_stores.k]\nfile = \"kv.json\"", "both 'file' and 'format' must be set"},
		{"kv file format not json", "[local_server.kv_stores.k]\nfile = \"kv.json\"\nformat = \"toml\"", "'toml' is not a valid format for the KV store"},
		{"kv json entry with file and data", "[local_server.kv_stores.k]\nfile = \"both.json\"\nformat = \"json\"", "'data' and 'file' are mutually exclusive"},
		{"object_store and kv_stores", "[local_server.object_stores]\na = []\n[local_server.kv_stores]\nb = []", "local_server.object_stores and local_server.kv_stores are the same setting"},
		{"secret with data and env", "[local_server.secret_stores]\ns = [{ key = \"a\", data = \"x\", env = \"HOME\" }]", "local_server.secret_stores.s: More than one of `file`, `data`, or `env` keys for the object `a` are set (data, env)"},
		{"secret without value", "[local_server.secret_stores]\ns = [{ key = \"a\" }]", "None of `file`, `data`, or `env` keys for the object `a` is set"},
		{"secret path is not file", "[local_server.secret_stores]\ns = [{ key = \"a\", path = \"value.txt\" }]", "None of `file`, `data`, or `env` keys"},
		{"secret name invalid", "[local_server.secret_stores]\ns = [{ key = \"my secret\", data = \"x\" }]", "Invalid secret name: my secret"},
		{"secret store name invalid", "[local_server.secret_stores]\n\"my/store\" = [{ key = \"a\", data = \"x\" }]", "Invalid secret store name: my/store"},
		{"secret env not a string", "[local_server.secret_stores]\ns = [{ key = \"a\", env = 1 }]", "The `env` value for the object `a` is not a string."},
		{"secret json not strings", "[local_server.secret_stores.s]\nfile = \"number.json\"\nformat = \"json\"", "expected to contain a single JSON object"},
		{"secret store not an array", "[local_server.secret_stores.s]\nkey = \"a\"", "There is no array of objects for the given store."},
		{"geolocation format unknown", "[local_server.geolocation]\nformat = \"csv\"", "local_server.geolocation: 'csv' is not a valid format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadManifest(writeFiles(t, map[string]string{
				"fastly.toml": tc.toml,
				"value.txt":   "v",
				"c.json":      `{}`,
				"list.json":   `["a"]`,
				"number.json": `{"n": 1}`,
				"kv.json":     `{"a": "x"}`,
				"both.json":   `{"a": {"data": "x", "file": "value.txt"}}`,
			}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestLoadManifestAcceptsWhatViceroyAccepts covers the forms Viceroy takes
// that a stricter reading might refuse.
func TestLoadManifestAcceptsWhatViceroyAccepts(t *testing.T) {
	path := writeFiles(t, map[string]string{
		"fastly.toml": `
manifest_version = 3
unknown_top_level = "ignored by Viceroy too"
[local_server]
viceroy_version = "0.14.4"
[local_server.backends.origin]
url = "http://127.0.0.1:8080/"
first_byte_timeout_ms = 1000
use_sni = false
[local_server.dictionaries.legacy]
format = "inline-toml"
[local_server.dictionaries.legacy.contents]
old = "yes"
[local_server.object_store]
empty = []
both = [{ key = "a", file = "f.txt", path = "p.txt" }]
`,
		"f.txt": "from file",
		"p.txt": "from path",
	})
	m, err := LoadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.ConfigStores["legacy"]["old"] != "yes" {
		t.Errorf("dictionaries: %v", m.ConfigStores)
	}
	if items, ok := m.KVStores["empty"]; !ok || len(items) != 0 {
		t.Errorf("an empty KV store: %v, %v", items, ok)
	}
	if got := string(m.KVStores["both"]["a"].Data); got != "from file" {
		t.Errorf("file and its old name path: %q, want file's", got)
	}
	want := []string{
		"local_server.backends.origin.use_sni",
		"local_server.backends.origin.first_byte_timeout_ms",
	}
	for _, w := range want {
		if !slices.Contains(m.Ignored, w) {
			t.Errorf("Ignored %v lacks %s", m.Ignored, w)
		}
	}
}

func TestRepositoryManifest(t *testing.T) {
	m, err := LoadManifest(filepath.Join("..", "..", "fastly.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if m.ConfigStores["waiting_room_config"]["rooms"] == "" || len(m.KVStores["waiting_room_templates"]["queue.html"].Data) == 0 ||
		len(m.SecretStores["waiting_room_secrets"]["signing_keys"]) == 0 || m.Backends["upstash"].URL == nil {
		t.Fatalf("fastly.toml's local_server is incomplete: %+v", m)
	}
}
