package fastlyhost

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"
)

// Manifest is what the host reads of fastly.toml's [local_server] section,
// in the forms `fastly compute serve` (Viceroy) accepts.
type Manifest struct {
	Backends     map[string]Backend
	ConfigStores map[string]map[string]string
	KVStores     map[string]map[string]KVEntry
	SecretStores map[string]map[string][]byte
	// Geo maps client IP addresses to the record fastly_geo.lookup returns.
	Geo map[string]map[string]any
}

// Backend is a named origin a guest may send requests to.
type Backend struct {
	URL          *url.URL
	OverrideHost string
}

// KVEntry is one KV store value and its metadata.
type KVEntry struct {
	Data     []byte
	Metadata string
}

// Limits Fastly (and Viceroy) enforce on config stores.
const (
	maxConfigKey   = 256
	maxConfigValue = 8000
)

type rawManifest struct {
	LocalServer struct {
		Backends     map[string]rawBackend `toml:"backends"`
		ConfigStores map[string]rawStore   `toml:"config_stores"`
		Dictionaries map[string]rawStore   `toml:"dictionaries"`
		KVStores     map[string]any        `toml:"kv_stores"`
		ObjectStores map[string]any        `toml:"object_stores"`
		SecretStores map[string]any        `toml:"secret_stores"`
		Geolocation  *struct {
			Format    string                    `toml:"format"`
			File      string                    `toml:"file"`
			Addresses map[string]map[string]any `toml:"addresses"`
		} `toml:"geolocation"`
	} `toml:"local_server"`
}

type rawBackend struct {
	URL          string `toml:"url"`
	OverrideHost string `toml:"override_host"`
}

type rawStore struct {
	File     string            `toml:"file"`
	Format   string            `toml:"format"`
	Contents map[string]string `toml:"contents"`
}

// LoadManifest reads fastly.toml; relative file names in it are relative to
// its directory, as for `fastly compute serve`.
func LoadManifest(path string) (*Manifest, error) {
	var raw rawManifest
	if _, err := toml.DecodeFile(path, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	ls := raw.LocalServer
	m := &Manifest{
		Backends:     map[string]Backend{},
		ConfigStores: map[string]map[string]string{},
		KVStores:     map[string]map[string]KVEntry{},
		SecretStores: map[string]map[string][]byte{},
		Geo:          map[string]map[string]any{},
	}
	for name, b := range ls.Backends {
		u, err := url.Parse(b.URL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("%s: local_server.backends.%s.url: %q is not an absolute URL", path, name, b.URL)
		}
		m.Backends[name] = Backend{URL: u, OverrideHost: b.OverrideHost}
	}
	for _, stores := range []map[string]rawStore{ls.Dictionaries, ls.ConfigStores} {
		for name, s := range stores {
			items, err := configItems(dir, s)
			if err != nil {
				return nil, fmt.Errorf("%s: local_server.config_stores.%s: %w", path, name, err)
			}
			m.ConfigStores[name] = items
		}
	}
	for _, stores := range []map[string]any{ls.ObjectStores, ls.KVStores} {
		for name, s := range stores {
			items, err := kvItems(dir, s)
			if err != nil {
				return nil, fmt.Errorf("%s: local_server.kv_stores.%s: %w", path, name, err)
			}
			m.KVStores[name] = items
		}
	}
	for name, s := range ls.SecretStores {
		items, err := secretItems(dir, s)
		if err != nil {
			return nil, fmt.Errorf("%s: local_server.secret_stores.%s: %w", path, name, err)
		}
		m.SecretStores[name] = items
	}
	if g := ls.Geolocation; g != nil {
		addrs := g.Addresses
		if g.File != "" {
			var doc map[string]map[string]any
			if err := readJSON(dir, g.File, &doc); err != nil {
				return nil, fmt.Errorf("%s: local_server.geolocation: %w", path, err)
			}
			addrs = doc
		}
		for ip, rec := range addrs {
			m.Geo[ip] = rec
		}
	}
	return m, nil
}

func readJSON(dir, file string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

func configItems(dir string, s rawStore) (map[string]string, error) {
	items := map[string]string{}
	switch {
	case s.File != "":
		if s.Format != "json" {
			return nil, fmt.Errorf("file %q needs format = \"json\"", s.File)
		}
		if err := readJSON(dir, s.File, &items); err != nil {
			return nil, err
		}
	case s.Format == "inline-toml" || s.Contents != nil:
		for k, v := range s.Contents {
			items[k] = v
		}
	default:
		return nil, fmt.Errorf("needs file and format = \"json\", or format = \"inline-toml\" and contents")
	}
	for k, v := range items {
		if len(k) > maxConfigKey {
			return nil, fmt.Errorf("key %.20q… is longer than %d characters", k, maxConfigKey)
		}
		if len(v) > maxConfigValue {
			return nil, fmt.Errorf("value of %q is %d characters; the limit is %d", k, len(v), maxConfigValue)
		}
	}
	return items, nil
}

// entryData reads an entry's value from data, file or path.
func entryData(dir string, e map[string]any) ([]byte, error) {
	if d, ok := e["data"].(string); ok {
		return []byte(d), nil
	}
	for _, k := range []string{"file", "path"} {
		if f, ok := e[k].(string); ok {
			return os.ReadFile(filepath.Join(dir, f))
		}
	}
	return nil, fmt.Errorf("entry %v has no data, file or path", e["key"])
}

func fileStore(dir string, v any) (map[string]any, bool, error) {
	t, ok := v.(map[string]any)
	if !ok {
		return nil, false, nil
	}
	f, _ := t["file"].(string)
	if f == "" || t["format"] != "json" {
		return nil, false, fmt.Errorf("a table needs file and format = \"json\"")
	}
	var doc map[string]any
	return doc, true, readJSON(dir, f, &doc)
}

func entries(v any) ([]map[string]any, error) {
	list, ok := v.([]map[string]any)
	if ok {
		return list, nil
	}
	anyList, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array of entries or {file, format = \"json\"}")
	}
	for _, e := range anyList {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("entry %v is not a table", e)
		}
		list = append(list, m)
	}
	return list, nil
}

// storeItems reads a KV or secret store in either of its forms: an array
// of entries (each turned into a value by fromEntry), or {file, format =
// "json"} (each JSON value turned into a value by fromJSON).
func storeItems[T any](dir string, v any, fromJSON func(key string, val any) (T, error), fromEntry func(e map[string]any) (T, error)) (map[string]T, error) {
	items := map[string]T{}
	doc, isFile, err := fileStore(dir, v)
	if err != nil {
		return nil, err
	}
	if isFile {
		for k, val := range doc {
			if items[k], err = fromJSON(k, val); err != nil {
				return nil, err
			}
		}
		return items, nil
	}
	list, err := entries(v)
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		key, _ := e["key"].(string)
		if key == "" {
			return nil, fmt.Errorf("an entry has no key")
		}
		if items[key], err = fromEntry(e); err != nil {
			return nil, err
		}
	}
	return items, nil
}

func kvItems(dir string, v any) (map[string]KVEntry, error) {
	fromEntry := func(e map[string]any) (KVEntry, error) {
		data, err := entryData(dir, e)
		meta, _ := e["metadata"].(string)
		return KVEntry{Data: data, Metadata: meta}, err
	}
	return storeItems(dir, v, func(k string, val any) (KVEntry, error) {
		switch x := val.(type) {
		case string:
			return KVEntry{Data: []byte(x)}, nil
		case map[string]any:
			return fromEntry(x)
		}
		return KVEntry{}, fmt.Errorf("key %q: value must be a string or {data|file, metadata}", k)
	}, fromEntry)
}

func secretItems(dir string, v any) (map[string][]byte, error) {
	return storeItems(dir, v, func(k string, val any) ([]byte, error) {
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("key %q: value must be a string", k)
		}
		return []byte(s), nil
	}, func(e map[string]any) ([]byte, error) {
		if env, ok := e["env"].(string); ok {
			return []byte(os.Getenv(env)), nil
		}
		return entryData(dir, e)
	})
}
