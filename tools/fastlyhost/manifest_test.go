package fastlyhost

import (
	"os"
	"path/filepath"
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
[local_server.dictionaries.legacy]
format = "inline-toml"
[local_server.dictionaries.legacy.contents]
old = "yes"
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
		{"dictionaries alias", m.ConfigStores["legacy"]["old"], "yes"},
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

func TestLoadManifestErrors(t *testing.T) {
	tests := []struct{ toml, want string }{
		{"[local_server.backends.x]\nurl = \"not a url\"", "backends.x.url"},
		{"[local_server.config_stores.c]\nfile = \"missing.json\"\nformat = \"json\"", "config_stores.c"},
		{"[local_server.config_stores.c]\nformat = \"yaml\"", "config_stores.c"},
		{"[local_server.config_stores.c]\nformat = \"inline-toml\"\n[local_server.config_stores.c.contents]\nk = \"" + strings.Repeat("v", 8001) + "\"", "the limit is 8000"},
		{"[local_server.kv_stores]\nk = [{ data = \"x\" }]", "no key"},
		{"[local_server.secret_stores]\ns = [{ key = \"a\" }]", "no data, file or path"},
		{"not toml", "fastly.toml"},
	}
	for _, tc := range tests {
		_, err := LoadManifest(writeFiles(t, map[string]string{"fastly.toml": tc.toml}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: %v, want an error mentioning %q", tc.toml, err, tc.want)
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
