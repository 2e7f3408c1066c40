package fastlyhost

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/tetratelabs/wazero/api"
)

// ShieldingSite is one of fastly.toml's [local_server.shielding_sites]:
// the POP the service pretends to run on ("local"), or a remote shield
// with the URLs its traffic goes to (src/shielding_site.rs in Viceroy).
type ShieldingSite struct {
	// Local marks the site the service runs on.
	Local bool
	// Unencrypted and Encrypted are a remote site's URLs, serialized as
	// Viceroy's url crate serializes them ("http://localhost/").
	Unencrypted, Encrypted string
}

// shieldingSite reads one site: the string "local" in any case, or a table
// of exactly the two strings encrypted and unencrypted, each an absolute
// URL. Viceroy, like the platform, does not check which is HTTPS.
func (l *loader) shieldingSite(_, name string, v any) error {
	var site ShieldingSite
	switch v := v.(type) {
	case string:
		if strings.ToLower(v) != "local" {
			return fmt.Errorf("Illegal TOML string for shielding site; must be 'local'")
		}
		site.Local = true
	case map[string]any:
		enc, encOK := v["encrypted"].(string)
		unenc, unencOK := v["unencrypted"].(string)
		if len(v) != 2 || !encOK || !unencOK {
			return fmt.Errorf("Illegal table for shielding site; must have exactly one key named 'encrypted', and one named 'unencrypted'")
		}
		var err error
		if site.Encrypted, err = whatwgURL(enc); err != nil {
			return err
		}
		if site.Unencrypted, err = whatwgURL(unenc); err != nil {
			return err
		}
	default:
		return fmt.Errorf("Illegal TOML value for shielding site; must be either the string 'local' or a table containing an encrypted and unencrypted URL.")
	}
	if l.m.ShieldingSites == nil {
		l.m.ShieldingSites = map[string]ShieldingSite{}
	}
	l.m.ShieldingSites[name] = site
	return nil
}

// defaultPorts are the WHATWG special schemes' default ports, which a
// serialized URL leaves out.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21", "file": ""}

// whatwgURL parses an absolute URL and serializes it as the url crate's
// Url::parse and to_string do, for the forms a shield's URL takes: scheme
// and host in lower case, no default port, and "/" for the empty path of
// a special scheme. The guest sees the serialized form.
func whatwgURL(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("Illegal URL (%s): %v", s, err)
	case u.Scheme == "":
		return "", fmt.Errorf("Illegal URL (%s): relative URL without a base", s)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	port, special := defaultPorts[u.Scheme]
	if !special {
		return u.String(), nil
	}
	if u.Host == "" && u.Scheme != "file" {
		return "", fmt.Errorf("Illegal URL (%s): empty host", s)
	}
	u.Host = strings.ToLower(u.Host)
	if u.Port() == port {
		u.Host = strings.TrimSuffix(u.Host, ":"+port)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// shieldInfo is fastly_shielding.shield_info's answer for a site: 1 when
// the service runs on it, else 0, then the unencrypted and encrypted URLs,
// each ended by a NUL (empty for the local site).
func shieldInfo(site ShieldingSite) []byte {
	out := []byte{0}
	if site.Local {
		out[0] = 1
	}
	out = append(append(out, site.Unencrypted...), 0)
	return append(append(out, site.Encrypted...), 0)
}

func init() {
	register(map[string]hostcall{
		"fastly_shielding.shield_info": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			name, ok := read(m, a[0], a[1])
			if !ok {
				return stInval
			}
			site, found := s.host.manifest.ShieldingSites[string(name)]
			if !found {
				return stInval
			}
			info := shieldInfo(site)
			if uint64(len(info)) > a[3] {
				// Viceroy reports the length needed only on success, so a
				// guest's buffer too small for the answer is an error.
				return stBufLen
			}
			return both(boolStatus(m.Write(u32(a[2]), info)), write32(m, a[4], uint32(len(info))))
		},
	})
}
