package fastlyhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigFileIsReadAtEveryOpen edits a JSON config store's file while
// the host serves: as in Viceroy, each open sees the file as it is then,
// and changes a program made to ConfigStores after loading (as devstack
// and the end-to-end tests do) stay on top of it.
func TestConfigFileIsReadAtEveryOpen(t *testing.T) {
	manifest := writeFiles(t, map[string]string{
		"fastly.toml": "[local_server.config_stores.live]\nfile = \"live.json\"\nformat = \"json\"\n",
		"live.json":   `{"a": "1", "b": "2", "gone": "x"}`,
	})
	loaded, err := LoadManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	srv, logs := startGuestWith(t, 3*time.Second, func(m *Manifest) {
		m.ConfigStores["live"] = loaded.ConfigStores["live"]
		m.configFiles = loaded.configFiles
		m.ConfigStores["live"]["b"] = "set in memory"
		m.ConfigStores["live"]["c"] = "added in memory"
		delete(m.ConfigStores["live"], "gone")
	})
	steps := []struct {
		name, file string // file: the JSON written before the request; "" leaves it
		key, want  string
	}{
		{"from the file", "", "a", "1|<nil>"},
		{"changed in memory", "", "b", "set in memory|<nil>"},
		{"added in memory", "", "c", "added in memory|<nil>"},
		{"deleted in memory", "", "gone", "|key not found"},
		{"file edited", `{"a": "edited", "b": "file", "gone": "y", "new": "n"}`, "a", "edited|<nil>"},
		{"key added to the file", "", "new", "n|<nil>"},
		{"memory still wins", "", "b", "set in memory|<nil>"},
		{"deletion still wins", "", "gone", "|key not found"},
		{"file broken mid-edit", `{"a": `, "a", "open: "},
		{"file mended", `{"a": "mended"}`, "a", "mended|<nil>"},
		{"value over the limit", `{"a": "` + strings.Repeat("v", 8001) + `"}`, "a", "open: "},
	}
	for _, st := range steps {
		if st.file != "" {
			if err := os.WriteFile(filepath.Join(filepath.Dir(manifest), "live.json"), []byte(st.file), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, body := get(t, srv.URL+"/config?store=live&key="+st.key, nil)
		if !strings.HasPrefix(body, st.want) {
			t.Errorf("%s: %s is %q, want %q", st.name, st.key, body, st.want)
		}
	}
	if !strings.Contains(logs.String(), "config store live: ") {
		t.Errorf("no log line says why the open failed:\n%s", logs)
	}
}
