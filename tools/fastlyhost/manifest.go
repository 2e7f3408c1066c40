package fastlyhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Manifest is what the host reads of fastly.toml's [local_server] section.
// LoadManifest accepts and refuses what Viceroy does (its src/config.rs and
// src/config/*.rs), so a manifest that works here works under `fastly
// compute serve`.
type Manifest struct {
	Backends map[string]Backend
	// ConfigStores holds each config store's items as loaded. A program
	// may change them before New (devstack and the end-to-end tests do).
	// A store read from a JSON file is read again at every open, as
	// Viceroy does, with the changes made here since LoadManifest laid
	// over the file's current items.
	ConfigStores map[string]map[string]string
	KVStores     map[string]map[string]KVEntry
	SecretStores map[string]map[string][]byte
	// Geo maps client IP addresses to the record fastly_geo.lookup returns.
	Geo map[string]map[string]any
	// GeoNoDefaultLoopback is use_default_loopback = false: a loopback
	// address the mapping lacks then has no record (geo.go).
	GeoNoDefaultLoopback bool
	// ACLs are the named ACLs fastly_acl.open opens (acl.go).
	ACLs map[string]*ACL
	// Devices is the device detection mapping (device.go).
	Devices DeviceDetection
	// ShieldingSites are the shields fastly_shielding knows (shielding.go).
	ShieldingSites map[string]ShieldingSite
	// Ignored names the settings Viceroy accepts that this host reads
	// past without acting on, such as a backend's first_byte_timeout_ms.
	Ignored []string

	configFiles map[string]configFile
}

// configFile is where a JSON-file config store lives, and the items it had
// when loaded, which tell later changes to ConfigStores from the file's.
type configFile struct {
	path   string
	loaded map[string]string
}

// Backend is a named origin a guest may send requests to.
type Backend struct {
	URL          *url.URL
	OverrideHost string
	Health       BackendHealth // see backends.go
}

// KVEntry is one KV store value and its metadata.
type KVEntry struct {
	Data     []byte
	Metadata string
}

// Limits Fastly (and Viceroy, src/config/limits.rs) enforce on config
// stores, in characters.
const (
	maxConfigKey   = 256
	maxConfigValue = 8000
)

// maxManifestVersion is the newest manifest_version Viceroy reads.
const maxManifestVersion = 3

// LocalManifest is the file beside fastly.toml whose [local_server]
// tables the host reads too. `fastly compute publish` rewrites fastly.toml
// through the CLI's own schema, which lacks some tables Viceroy reads
// (geolocation and acls among them) and every comment: what the local
// host needs of those lives here, where the CLI never writes. Viceroy
// itself does not read this file.
const LocalManifest = "fastly.local.toml"

// LoadManifest reads fastly.toml, and the LocalManifest beside it when
// there is one: a [local_server] table may be in one of them, not both.
// Relative file names in them are relative to their directory (Viceroy
// takes them relative to its working directory, which `fastly compute
// serve` makes the manifest's).
func LoadManifest(path string) (*Manifest, error) {
	var raw struct {
		ManifestVersion *int64         `toml:"manifest_version"`
		LocalServer     map[string]any `toml:"local_server"`
	}
	if _, err := toml.DecodeFile(path, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if v := raw.ManifestVersion; v != nil && *v > maxManifestVersion {
		return nil, fmt.Errorf("%s: unsupported manifest version %d; max supported version is %d", path, *v, maxManifestVersion)
	}
	local := filepath.Join(filepath.Dir(path), LocalManifest)
	var more struct {
		LocalServer map[string]any `toml:"local_server"`
	}
	if _, err := toml.DecodeFile(local, &more); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", local, err)
	}
	if raw.LocalServer == nil {
		raw.LocalServer = map[string]any{}
	}
	for _, name := range slices.Sorted(maps.Keys(more.LocalServer)) {
		if _, twice := raw.LocalServer[name]; twice {
			return nil, fmt.Errorf("local_server.%s is in both %s and %s; keep one", name, path, local)
		}
		raw.LocalServer[name] = more.LocalServer[name]
	}
	l := loader{dir: filepath.Dir(path), m: &Manifest{
		Backends:     map[string]Backend{},
		ConfigStores: map[string]map[string]string{},
		KVStores:     map[string]map[string]KVEntry{},
		SecretStores: map[string]map[string][]byte{},
		Geo:          map[string]map[string]any{},
		configFiles:  map[string]configFile{},
	}}
	if err := l.localServer(raw.LocalServer); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l.m, nil
}

// configStore returns a config store's items for one open: for a store
// read from a JSON file, the file as it is now, so an edit to it takes
// effect at once, as in Viceroy (Dictionary::load, called by every
// dictionary_handle in src/sandbox.rs). Changes made to ConfigStores since
// LoadManifest stay on top of the file.
func (m *Manifest) configStore(name string) (map[string]string, bool, error) {
	items, found := m.ConfigStores[name]
	src, fromFile := m.configFiles[name]
	if !found || !fromFile {
		return items, found, nil
	}
	current, err := readConfigFile(src.path)
	if err != nil {
		return nil, true, fmt.Errorf("config store %s: %s: %w", name, src.path, err)
	}
	for k, v := range items {
		if was, ok := src.loaded[k]; !ok || was != v {
			current[k] = v
		}
	}
	for k := range src.loaded {
		if _, ok := items[k]; !ok {
			delete(current, k)
		}
	}
	return current, true, nil
}

// loader reads [local_server] into m.
type loader struct {
	dir string
	m   *Manifest
}

// sections are the parts of [local_server] Viceroy reads, each under every
// name serde accepts for it (RawLocalServerConfig in src/config.rs). A
// part this host does not implement is listed in Ignored; other names
// Viceroy ignores, and so does the host.
var sections = []struct {
	names []string
	read  func(l *loader, section string, v any) error
}{
	{[]string{"backends"}, eachNamed((*loader).backend)},
	{[]string{"dictionaries", "config_stores"}, eachNamed((*loader).configStoreDef)},
	{[]string{"object_stores", "object_store", "kv_stores"}, eachNamed((*loader).kvStore)},
	{[]string{"secret_stores"}, eachNamed((*loader).secretStore)},
	{[]string{"geolocation"}, (*loader).geolocation},
	{[]string{"acls"}, eachNamed((*loader).acl)},
	{[]string{"device_detection"}, (*loader).deviceDetection},
	{[]string{"shielding_sites"}, eachNamed((*loader).shieldingSite)},
	{[]string{"fake_valid_fastly_keys"}, nil},
}

func (l *loader) localServer(ls map[string]any) error {
	for _, sec := range sections {
		var present []string
		for _, n := range sec.names {
			if _, ok := ls[n]; ok {
				present = append(present, n)
			}
		}
		switch {
		case len(present) > 1:
			return fmt.Errorf("local_server.%s and local_server.%s are the same setting; keep one", present[0], present[1])
		case len(present) == 0:
		case sec.read == nil:
			l.m.Ignored = append(l.m.Ignored, "local_server."+present[0])
		default:
			if err := sec.read(l, present[0], ls[present[0]]); err != nil {
				return err
			}
		}
	}
	return nil
}

// eachNamed reads a section that is a table of named definitions, in name
// order, so the first error reported is the same every run.
func eachNamed(read func(l *loader, section, name string, v any) error) func(*loader, string, any) error {
	return func(l *loader, section string, v any) error {
		t, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("local_server.%s: not a table", section)
		}
		for _, name := range slices.Sorted(maps.Keys(t)) {
			if err := read(l, section, name, t[name]); err != nil {
				return fmt.Errorf("local_server.%s.%s: %w", section, name, err)
			}
		}
		return nil
	}
}

func (l *loader) path(file string) string { return filepath.Join(l.dir, file) }

// fileText is the content of an entry's file.
func (l *loader) fileText(file string) (string, error) {
	b, err := os.ReadFile(l.path(file))
	return string(b), err
}

// fields is a TOML table read the way Viceroy's deserializers read one:
// each known key is taken out, and a key left over is refused.
type fields map[string]any

func asFields(v any) (fields, error) {
	t, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("definition was not provided as a TOML table")
	}
	return maps.Clone(fields(t)), nil
}

func (f fields) take(key string) (any, bool) {
	v, ok := f[key]
	delete(f, key)
	return v, ok
}

// str takes a key whose value must be a string.
func (f fields) str(key string) (s string, present bool, err error) {
	v, present := f.take(key)
	if !present {
		return "", false, nil
	}
	if s, ok := v.(string); ok {
		return s, true, nil
	}
	return "", true, fmt.Errorf("'%s' field was not a string", key)
}

// required takes a key whose value must be a non-empty string.
func (f fields) required(key string) (string, error) {
	s, present, err := f.str(key)
	switch {
	case err != nil:
		return "", err
	case !present:
		return "", fmt.Errorf("missing '%s' field", key)
	case strings.TrimSpace(s) == "":
		return "", fmt.Errorf("'%s' field is empty", key)
	}
	return s, nil
}

// unrecognized refuses a key left over, as Viceroy's
// check_for_unrecognized_keys does: a misspelt key is an error, not a
// setting silently dropped.
func (f fields) unrecognized() error {
	if len(f) == 0 {
		return nil
	}
	return fmt.Errorf("unrecognized key '%s'", slices.Sorted(maps.Keys(f))[0])
}

// backendIgnored are the backend keys Viceroy accepts (src/config/
// backends.rs) that this host does not act on: it speaks plain HTTP/1.1
// with no timeouts of its own.
var backendIgnored = []string{"cert_host", "use_sni", "client_certificate", "ca_certificate", "grpc",
	"first_byte_timeout_ms", "between_bytes_timeout_ms"}

func (l *loader) backend(section, name string, v any) error {
	f, err := asFields(v)
	if err != nil {
		return err
	}
	raw, err := f.required("url")
	if err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("invalid url: %q is not an absolute URL", raw)
	}
	b := Backend{URL: u}
	if _, present := f["override_host"]; present {
		if b.OverrideHost, err = f.required("override_host"); err != nil {
			return err
		}
	}
	if v, present := f.take("health"); present {
		if b.Health, err = parseHealth(v); err != nil {
			return err
		}
	}
	for _, k := range backendIgnored {
		if _, present := f.take(k); present {
			l.m.Ignored = append(l.m.Ignored, fmt.Sprintf("local_server.%s.%s.%s", section, name, k))
		}
	}
	if err := f.unrecognized(); err != nil {
		return err
	}
	l.m.Backends[name] = b
	return nil
}

// configStoreDef reads a config store (a dictionary, in Viceroy's words:
// src/config/dictionaries.rs): format = "inline-toml" with contents, or
// format = "json" with file, and nothing else.
func (l *loader) configStoreDef(_, name string, v any) error {
	f, err := asFields(v)
	if err != nil {
		return err
	}
	format, err := f.required("format")
	if err != nil {
		return err
	}
	var items map[string]string
	switch format {
	case "inline-toml":
		contents, ok := f.take("contents")
		if !ok {
			return fmt.Errorf("missing 'contents' field")
		}
		t, ok := contents.(map[string]any)
		if !ok {
			return fmt.Errorf("'contents' was not provided as a TOML table")
		}
		items = map[string]string{}
		for k, v := range t {
			if items[k], ok = v.(string); !ok {
				return fmt.Errorf("inline dictionary value was not a string")
			}
		}
		if err := validateConfig(items); err != nil {
			return err
		}
	case "json":
		file, err := f.required("file")
		if err != nil {
			return err
		}
		path := l.path(file)
		if items, err = readConfigFile(path); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		l.m.configFiles[name] = configFile{path: path, loaded: maps.Clone(items)}
	default:
		return fmt.Errorf("'%s' is not a valid format for the dictionary. Supported format(s) are: 'inline-toml', 'json'.", format)
	}
	if err := f.unrecognized(); err != nil {
		return err
	}
	l.m.ConfigStores[name] = items
	return nil
}

// readConfigFile reads a JSON config store file: one object whose values
// are strings within Fastly's limits.
func readConfigFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil || doc == nil {
		return nil, fmt.Errorf("The file is of the wrong format. The file is expected to contain a single JSON Object")
	}
	items := make(map[string]string, len(doc))
	for k, v := range doc {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("Item value under key named '%s' is of the wrong format. The value is expected to be a JSON String", k)
		}
		items[k] = s
	}
	return items, validateConfig(items)
}

func validateConfig(items map[string]string) error {
	for k, v := range items {
		if utf8.RuneCountInString(k) > maxConfigKey {
			return fmt.Errorf("Item key named '%s' is too long, max size is %d", k, maxConfigKey)
		}
		if utf8.RuneCountInString(v) > maxConfigValue {
			return fmt.Errorf("Item value named '%s' is too long, max size is %d", k, maxConfigValue)
		}
	}
	return nil
}

// storeRows reads a KV or secret store in either of its forms, as Viceroy
// does (src/config/object_store.rs, secret_store.rs): an array of entry
// tables, or a table with both file and format = "json", whose file
// fromJSON turns into entry tables.
func (l *loader) storeRows(v any, kind string, fromJSON func(path string) ([]map[string]any, error)) ([]map[string]any, error) {
	var list []any
	switch x := v.(type) {
	case map[string]any:
		file, hasFile := x["file"].(string)
		format, hasFormat := x["format"].(string)
		switch {
		case hasFile && hasFormat:
			if format != "json" {
				return nil, fmt.Errorf("'%s' is not a valid format for the %s. Supported format(s) are: 'json'.", format, kind)
			}
			rows, err := fromJSON(l.path(file))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			return rows, nil
		case hasFile || hasFormat:
			return nil, fmt.Errorf("When using a top-level 'file' to load data, both 'file' and 'format' must be set.")
		}
		return nil, fmt.Errorf("There is no array of objects for the given store.")
	case []map[string]any:
		return x, nil
	case []any:
		list = x
	default:
		return nil, fmt.Errorf("There is no array of objects for the given store.")
	}
	rows := make([]map[string]any, 0, len(list))
	for _, e := range list {
		t, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("There is an object in the given store that is not a table of keys.")
		}
		rows = append(rows, t)
	}
	return rows, nil
}

// rowKey is an entry's key, which every entry must have.
func rowKey(row map[string]any) (string, error) {
	v, ok := row["key"]
	if !ok {
		return "", fmt.Errorf("The `key` key for an object is not set. It must be used.")
	}
	key, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("The `key` value for an object is not a string.")
	}
	return key, nil
}

// rowString is an entry's optional string value for field.
func rowString(row map[string]any, field, key string) (string, bool, error) {
	v, ok := row[field]
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, fmt.Errorf("The `%s` value for the object `%s` is not a string.", field, key)
	}
	return s, true, nil
}

func (l *loader) kvStore(_, name string, v any) error {
	rows, err := l.storeRows(v, "KV store", readKVFile)
	if err != nil {
		return err
	}
	items := map[string]KVEntry{}
	for _, row := range rows {
		key, err := rowKey(row)
		if err != nil {
			return err
		}
		if err := validKVKey(key); err != nil {
			return fmt.Errorf("Invalid `key` value used: %w.", err)
		}
		// "path" is the old name of "file"; Viceroy takes file when both
		// are there.
		fileField := "file"
		if _, ok := row["file"]; !ok {
			fileField = "path"
		}
		file, hasFile, err := rowString(row, fileField, key)
		if err != nil {
			return err
		}
		data, hasData, err := rowString(row, "data", key)
		if err != nil {
			return err
		}
		meta, _, err := rowString(row, "metadata", key)
		if err != nil {
			return err
		}
		switch {
		case hasFile && hasData:
			return fmt.Errorf("The `file` and `data` keys for the object `%s` are set. Only one can be used.", key)
		case hasFile:
			if data, err = l.fileText(file); err != nil {
				return err
			}
		case !hasData:
			return fmt.Errorf("The `file` or `data` key for the object `%s` is not set. One must be used.", key)
		}
		items[key] = KVEntry{Data: []byte(data), Metadata: meta}
	}
	l.m.KVStores[name] = items
	return nil
}

// readKVFile reads a JSON KV store file: each value a string, or an object
// with exactly one of data and file, and optional metadata.
func readKVFile(path string) ([]map[string]any, error) {
	var doc map[string]any
	if err := readJSON(path, &doc, "The file is of the wrong format. The file is expected to contain a single JSON Object."); err != nil {
		return nil, err
	}
	var rows []map[string]any
	for _, key := range slices.Sorted(maps.Keys(doc)) {
		wrong := fmt.Errorf("Item value under key named '%s' is of the wrong format. The value is expected to be a JSON String.", key)
		row := map[string]any{"key": key}
		switch x := doc[key].(type) {
		case string:
			row["data"] = x
		case map[string]any:
			for _, field := range []string{"data", "file", "metadata"} {
				if v, ok := x[field]; ok {
					if _, isStr := v.(string); !isStr {
						return nil, wrong
					}
					row[field] = v
				}
			}
			_, hasData := row["data"]
			_, hasFile := row["file"]
			switch {
			case hasData && hasFile:
				return nil, fmt.Errorf("Item value under key named '%s' is of the wrong format. 'data' and 'file' are mutually exclusive.", key)
			case !hasData && !hasFile:
				return nil, fmt.Errorf("Item value under key named '%s' is of the wrong format. One of 'data' or 'file' must be present.", key)
			}
		default:
			return nil, wrong
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// validKVKey applies Fastly's KV key rules, as Viceroy's is_valid_key
// (src/object_store.rs) does.
func validKVKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("Keys for objects cannot be empty")
	case len(key) > 1024:
		return fmt.Errorf("Keys for objects cannot be over 1024 bytes in size")
	case strings.HasPrefix(key, ".well-known/acme-challenge"):
		return fmt.Errorf("Keys for objects cannot start with `.well-known/acme-challenge`")
	case key == ".." || strings.Contains(key, "../") || strings.HasSuffix(key, "/.."):
		return fmt.Errorf("Keys for objects cannot be named `..`")
	case key == "." || strings.Contains(key, "./") || strings.HasSuffix(key, "/."):
		return fmt.Errorf("Keys for objects cannot be named `.`")
	}
	if i := strings.IndexAny(key, "\r\n#;?^|"); i >= 0 {
		return fmt.Errorf("Keys for objects cannot contain a `%c`", key[i])
	}
	if r, _ := utf8.DecodeRuneInString(key); utf8.RuneCountInString(key) == 1 && (r <= ' ' || r == 0xFFFE || r == 0xFFFF) {
		return fmt.Errorf("Keys for objects cannot contain a `%U`", r)
	}
	return nil
}

func (l *loader) secretStore(_, name string, v any) error {
	if !validSecretName(name) {
		return fmt.Errorf("Invalid secret store name: %s", name)
	}
	rows, err := l.storeRows(v, "secret store", readSecretFile)
	if err != nil {
		return err
	}
	items := map[string][]byte{}
	for _, row := range rows {
		key, err := rowKey(row)
		if err != nil {
			return err
		}
		if !validSecretName(key) {
			return fmt.Errorf("Invalid secret name: %s", key)
		}
		var sources []string
		for _, field := range []string{"file", "data", "env"} {
			if _, ok := row[field]; ok {
				sources = append(sources, field)
			}
		}
		switch len(sources) {
		case 0:
			return fmt.Errorf("None of `file`, `data`, or `env` keys for the object `%s` is set. One must be used.", key)
		case 1:
		default:
			return fmt.Errorf("More than one of `file`, `data`, or `env` keys for the object `%s` are set (%s). Only one can be used.", key, strings.Join(sources, ", "))
		}
		s, _, err := rowString(row, sources[0], key)
		if err != nil {
			return err
		}
		switch sources[0] {
		case "file":
			if s, err = l.fileText(s); err != nil {
				return err
			}
		case "env":
			s = os.Getenv(s)
		}
		items[key] = []byte(s)
	}
	l.m.SecretStores[name] = items
	return nil
}

// readSecretFile reads a JSON secret store file: one object of strings.
func readSecretFile(path string) ([]map[string]any, error) {
	var doc map[string]string
	if err := readJSON(path, &doc, "The file is of the wrong format. The file is expected to contain a single JSON object."); err != nil {
		return nil, err
	}
	var rows []map[string]any
	for _, key := range slices.Sorted(maps.Keys(doc)) {
		rows = append(rows, map[string]any{"key": key, "data": doc[key]})
	}
	return rows, nil
}

// validSecretName is Fastly's rule for secret store and secret names:
// letters, digits, '-', '_' and '.', at most 255 bytes (is_valid_name in
// Viceroy's src/config/secret_store.rs).
func validSecretName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// readJSON decodes the JSON file at path into v, or says wrongFormat when
// it is not what v needs.
func readJSON(path string, v any, wrongFormat string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if json.Unmarshal(b, v) != nil {
		return fmt.Errorf("%s", wrongFormat)
	}
	return nil
}

// geolocation reads the mapping as Viceroy does (src/config/
// geolocation.rs): none without a format, inline-toml addresses, or a json
// file.
func (l *loader) geolocation(section string, v any) error {
	if err := l.geoMapping(v); err != nil {
		return fmt.Errorf("local_server.%s: %w", section, err)
	}
	return nil
}

func (l *loader) geoMapping(v any) error {
	f, err := asFields(v)
	if err != nil {
		return err
	}
	if v, ok := f.take("use_default_loopback"); ok {
		b, isBool := v.(bool)
		if !isBool {
			return fmt.Errorf("definition was not provided as a TOML table") // Viceroy's words
		}
		l.m.GeoNoDefaultLoopback = !b
	}
	format, present, err := f.str("format")
	if err != nil || !present {
		return err
	}
	var addrs map[string]any
	switch format {
	case "inline-toml":
		a, ok := f.take("addresses")
		if !ok {
			return fmt.Errorf("missing 'addresses' field")
		}
		if addrs, ok = a.(map[string]any); !ok {
			return fmt.Errorf("'addresses' was not provided as a TOML table")
		}
	case "json":
		file, err := f.required("file")
		if err != nil {
			return err
		}
		if err := readJSON(l.path(file), &addrs, "The file is of the wrong format. The file is expected to contain a single JSON Object"); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	case "":
		return fmt.Errorf("'format' field is empty")
	default:
		return fmt.Errorf("'%s' is not a valid format for the geolocation mapping. Supported format(s) are: 'inline-toml', 'json'.", format)
	}
	for ip, rec := range addrs {
		r, ok := rec.(map[string]any)
		if !ok {
			return fmt.Errorf("inline geolocation value was not a table: %s", ip)
		}
		// Keyed by the address as netip prints it, so that any spelling
		// of an address matches, as Viceroy's IpAddr keys do.
		addr, err := netip.ParseAddr(ip)
		if err != nil || addr.Zone() != "" {
			return fmt.Errorf("IP address not valid: 'invalid IP address syntax'")
		}
		l.m.Geo[addr.String()] = r
	}
	return nil
}
