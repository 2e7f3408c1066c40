package fastlyhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// DeviceDetection is fastly.toml's [local_server.device_detection]: what
// fastly_device_detection.lookup answers for each User-Agent, read as
// Viceroy reads it (src/config/device_detection.rs).
type DeviceDetection struct {
	// UserAgents maps a User-Agent, exactly, to its device data: the
	// inline-toml mapping, or the JSON file's as loaded.
	UserAgents map[string]map[string]any
	// file is the JSON file of a json mapping, read again at every
	// lookup as Viceroy does, so an edit takes effect at once.
	file string
}

// lookup returns the device data for userAgent as the JSON text Viceroy
// returns, or false when there is none.
func (d *DeviceDetection) lookup(userAgent string) ([]byte, bool, error) {
	agents := d.UserAgents
	if d.file != "" {
		var err error
		if agents, err = readDeviceFile(d.file); err != nil {
			return nil, false, err
		}
	}
	data, ok := agents[userAgent]
	if !ok {
		return nil, false, nil
	}
	doc, err := serdeJSON(data)
	return doc, true, err
}

// deviceDetection reads the section: no mapping without a format (other
// keys are then ignored, as by Viceroy), an inline-toml user_agents table,
// or a JSON file holding one object.
func (l *loader) deviceDetection(section string, v any) error {
	if err := l.deviceMapping(v); err != nil {
		return fmt.Errorf("local_server.%s: %w", section, err)
	}
	return nil
}

func (l *loader) deviceMapping(v any) error {
	f, err := asFields(v)
	if err != nil {
		return err
	}
	format, present, err := f.str("format")
	if err != nil || !present {
		return err
	}
	switch format {
	case "inline-toml":
		ua, ok := f.take("user_agents")
		if !ok {
			return fmt.Errorf("missing 'user_agents' field")
		}
		agents, ok := ua.(map[string]any)
		if !ok {
			return fmt.Errorf("'user_agents' was not provided as a TOML table")
		}
		l.m.Devices.UserAgents = map[string]map[string]any{}
		for agent, data := range agents {
			t, ok := data.(map[string]any)
			if !ok || !jsonableTOML(t) {
				// Viceroy's wording, though the value it wants is a table.
				return fmt.Errorf("inline device detection value was not a string")
			}
			l.m.Devices.UserAgents[agent] = t
		}
	case "json":
		file, present, err := f.str("file")
		switch {
		case err != nil:
			return err
		case !present:
			return fmt.Errorf("missing 'file' field")
		case file == "":
			return fmt.Errorf("'file' field is empty")
		}
		path := l.path(file)
		agents, err := readDeviceFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		l.m.Devices = DeviceDetection{UserAgents: agents, file: path}
	case "":
		return fmt.Errorf("'format' field is empty")
	default:
		return fmt.Errorf("'%s' is not a valid format for the device detection mapping. Supported format(s) are: 'inline-toml', 'json'.", format)
	}
	return nil
}

// jsonableTOML reports whether Viceroy converts a TOML table to JSON:
// strings, integers, finite floats, booleans and tables of them, but no
// arrays or dates.
func jsonableTOML(t map[string]any) bool {
	for _, v := range t {
		switch v := v.(type) {
		case string, int64, bool:
		case float64:
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return false
			}
		case map[string]any:
			if !jsonableTOML(v) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// readDeviceFile reads a json mapping: one object of User-Agents, each
// mapped to an object. Numbers keep their text, as serde_json keeps them.
func readDeviceFile(path string) (map[string]map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if dec.Decode(&doc) != nil || doc == nil || dec.More() {
		return nil, fmt.Errorf("The file is of the wrong format. The file is expected to contain a single JSON Object")
	}
	agents := make(map[string]map[string]any, len(doc))
	for agent, data := range doc {
		t, ok := data.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("inline device detection value was not a string")
		}
		agents[agent] = t
	}
	return agents, nil
}

// serdeJSON encodes v as Viceroy's serde_json::to_string does: compact,
// object keys sorted (Go's order too), no HTML escaping, and a float that
// is a whole number keeps its ".0".
func serdeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(serdeFloats(v)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// serdeFloats replaces each float64 in v by its serde_json text.
func serdeFloats(v any) any {
	switch v := v.(type) {
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			s += ".0"
		}
		return json.Number(s)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = serdeFloats(e)
		}
		return out
	}
	return v
}

func init() {
	register(map[string]hostcall{
		"fastly_device_detection.lookup": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			ua, ok := read(m, a[0], a[1])
			if !ok || !utf8.Valid(ua) {
				return stInval
			}
			doc, found, err := s.host.manifest.Devices.lookup(string(ua))
			switch {
			case err != nil:
				s.host.logf("fastly_device_detection.lookup: %v", err)
				return stError
			case !found:
				return stNone
			}
			return writeBuf(m, a[2], a[3], a[4], doc)
		},
	})
}
