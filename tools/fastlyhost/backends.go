package fastlyhost

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// The backend calls (fastly_backend.*) and dynamic backends
// (fastly_http_req.register_dynamic_backend), as Viceroy makes them in its
// src/wiggle_abi/backend_impl.rs and req_impl.rs: a backend the instance
// does not know is Inval; what Viceroy cannot tell (timeouts, TLS
// versions) is Unsupported; the keepalive settings of its unpooled
// connections are 0.

// BackendHealth is a backend's health as fastly_backend.is_healthy reports
// it. Viceroy runs no health checks: a backend's health is what its
// manifest entry's "health" says, and Unknown for a dynamic backend.
type BackendHealth uint32

// The healths, numbered as the ABI's backend_health enum.
const (
	HealthUnknown BackendHealth = iota
	HealthHealthy
	HealthUnhealthy
)

// parseHealth reads a manifest's health setting as Viceroy does
// (src/config/backends.rs): one of three words, in any case.
func parseHealth(v any) (BackendHealth, error) {
	s, ok := v.(string)
	if !ok {
		s = "not a string"
	}
	switch strings.ToLower(s) {
	case "unknown":
		return HealthUnknown, nil
	case "healthy":
		return HealthHealthy, nil
	case "unhealthy":
		return HealthUnhealthy, nil
	}
	return 0, fmt.Errorf("'health' field has invalid value '%s' (expected 'unknown', 'healthy', or 'unhealthy')", s)
}

// StandInsEnv names the environment variable that sends dynamic backends
// to local stand-ins: comma-separated host=URL pairs, such as
// "example.net=http://127.0.0.1:34567". A dynamic backend whose target's
// host is listed connects to the URL's scheme and address instead; the
// guest still sees the target it registered (get_host, get_port, is_ssl)
// and the request keeps its Host header. Static backends need no such
// thing, as their URLs are in the manifest, which a test can rewrite; a
// dynamic backend's target is in the guest's code. With no internet, as in
// the SDK's conformance runs, it is the only way such a backend connects.
const StandInsEnv = "FASTLYHOST_STAND_INS"

// standIn returns where a dynamic backend for target connects instead, or
// nil.
func standIn(target string) (*url.URL, error) {
	host := target
	if u, err := url.Parse("http://" + target); err == nil {
		host = u.Hostname()
	}
	for _, pair := range strings.Split(os.Getenv(StandInsEnv), ",") {
		name, to, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(name, host) {
			continue
		}
		u, err := url.Parse(to)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("%s: %q is not an absolute URL", StandInsEnv, to)
		}
		return u, nil
	}
	return nil, nil
}

// dynamicBackend is a backend the guest registered.
type dynamicBackend struct {
	Backend
	// via, when set, is where its connections go instead (StandInsEnv).
	via *url.URL
}

// backend returns the backend named name, static or dynamic, and where its
// connections go when not to its own URL.
func (s *state) backend(name string) (b Backend, via *url.URL, found bool) {
	if b, found := s.host.manifest.Backends[name]; found {
		return b, nil, true
	}
	if d, found := s.dynamic[name]; found {
		return d.Backend, d.via, true
	}
	return Backend{}, nil, false
}

// backendCall is a fastly_backend call on the backend named by its first
// two arguments.
func backendCall(f func(s *state, m api.Memory, b Backend, dynamic bool, a []uint64) Status) hostcall {
	return func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		name, ok := read(m, a[0], a[1])
		if !ok || !utf8.Valid(name) {
			return stInval
		}
		b, _, found := s.backend(string(name))
		if !found {
			return stInval
		}
		_, dynamic := s.dynamic[string(name)]
		return f(s, m, b, dynamic, a)
	}
}

// unsupported answers a call about something Viceroy cannot tell.
func unsupported(*state, api.Memory, Backend, bool, []uint64) Status { return stUnsupported }

// zero answers a keepalive setting of Viceroy's unpooled connections.
func zero(_ *state, m api.Memory, _ Backend, _ bool, a []uint64) Status { return write32(m, a[2], 0) }

func flag(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}

// host is a backend URL's host as hyper's Uri::host gives it: without the
// port, an IPv6 address in brackets.
func host(u *url.URL) string {
	h := u.Hostname()
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// Flags of register_dynamic_backend's backend_config_options (typenames.witx).
const (
	optReserved     = 1 << 0
	optHostOverride = 1 << 1
	optUseSSL       = 1 << 5
	optCertHostname = 1 << 8
	optCACert       = 1 << 9
	optSNIHostname  = 1 << 11
	optClientCert   = 1 << 13
	// optKnown are the flags Viceroy's witx defines, $reserved to
	// $healthcheck; another bit is refused.
	optKnown = 1<<19 - 1
)

// Byte offsets in dynamic_backend_config (typenames.witx) of the fields
// Viceroy reads.
const (
	cfgHostOverride = 0
	cfgCertHostname = 28
	cfgCACert       = 36
	cfgSNIHostname  = 52
)

func init() {
	register(map[string]hostcall{
		"fastly_backend.exists": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			name, ok := read(m, a[0], a[1])
			if !ok || !utf8.Valid(name) {
				return stInval
			}
			_, _, found := s.backend(string(name))
			return write32(m, a[2], flag(found))
		},
		"fastly_backend.is_healthy": backendCall(func(s *state, m api.Memory, b Backend, _ bool, a []uint64) Status {
			return write32(m, a[2], uint32(b.Health))
		}),
		"fastly_backend.is_dynamic": backendCall(func(s *state, m api.Memory, _ Backend, dynamic bool, a []uint64) Status {
			return write32(m, a[2], flag(dynamic))
		}),
		"fastly_backend.get_host": backendCall(func(s *state, m api.Memory, b Backend, _ bool, a []uint64) Status {
			return writeBuf(m, a[2], a[3], a[4], []byte(host(b.URL)))
		}),
		"fastly_backend.get_override_host": backendCall(func(s *state, m api.Memory, b Backend, _ bool, a []uint64) Status {
			if b.OverrideHost == "" {
				return stNone
			}
			return writeBuf(m, a[2], a[3], a[4], []byte(b.OverrideHost))
		}),
		"fastly_backend.get_port": backendCall(func(s *state, m api.Memory, b Backend, _ bool, a []uint64) Status {
			port, err := strconv.ParseUint(b.URL.Port(), 10, 16)
			switch {
			case err == nil:
			case b.URL.Scheme == "https":
				port = 443
			default:
				port = 80
			}
			return write16(m, a[2], uint16(port))
		}),
		"fastly_backend.is_ssl": backendCall(func(s *state, m api.Memory, b Backend, _ bool, a []uint64) Status {
			return write32(m, a[2], flag(b.URL.Scheme == "https"))
		}),
		"fastly_backend.get_connect_timeout_ms":       backendCall(unsupported),
		"fastly_backend.get_first_byte_timeout_ms":    backendCall(unsupported),
		"fastly_backend.get_between_bytes_timeout_ms": backendCall(unsupported),
		"fastly_backend.get_ssl_min_version":          backendCall(unsupported),
		"fastly_backend.get_ssl_max_version":          backendCall(unsupported),
		"fastly_backend.get_http_keepalive_time":      backendCall(zero),
		"fastly_backend.get_tcp_keepalive_enable":     backendCall(zero),
		"fastly_backend.get_tcp_keepalive_interval":   backendCall(zero),
		"fastly_backend.get_tcp_keepalive_probes":     backendCall(zero),
		"fastly_backend.get_tcp_keepalive_time":       backendCall(zero),

		"fastly_http_req.register_dynamic_backend": registerDynamicBackend,
	})
}

// registerDynamicBackend adds a backend for this instance, checking its
// options as Viceroy's register_dynamic_backend does, in the same order
// and with the same statuses: a name already taken, by a static or a
// dynamic backend, is Error, which the SDK reports as ErrBackendNameInUse.
func registerDynamicBackend(_ context.Context, s *state, m api.Memory, a []uint64) Status {
	name, ok1 := read(m, a[0], a[1])
	target, ok2 := read(m, a[2], a[3])
	if !ok1 || !ok2 || !utf8.Valid(name) || !utf8.Valid(target) {
		return stInval
	}
	mask, cfg := uint32(a[4]), u32(a[5])
	if mask&optReserved != 0 || mask&^optKnown != 0 {
		return stInval
	}
	// field reads a (pointer, length) pair of the config, at most max bytes
	// long; Viceroy refuses an empty or longer one.
	field := func(off uint32, max uint32) ([]byte, Status) {
		pair, ok := m.Read(cfg+off, 8)
		if !ok {
			return nil, stInval
		}
		ptr, n := binary.LittleEndian.Uint32(pair), binary.LittleEndian.Uint32(pair[4:])
		if n == 0 || n > max {
			return nil, stInval
		}
		v, ok := read(m, uint64(ptr), uint64(n))
		if !ok {
			return nil, stInval
		}
		return v, stOK
	}
	b := dynamicBackend{}
	if mask&optHostOverride != 0 {
		v, st := field(cfgHostOverride, 1024)
		if st != stOK {
			return st
		}
		if !utf8.Valid(v) {
			return stInval
		}
		if !validHeaderValue(string(v)) {
			return stError // hyper's InvalidHeaderValue
		}
		b.OverrideHost = string(v)
	}
	scheme := "http"
	if mask&optUseSSL != 0 {
		scheme = "https"
	}
	// The TLS settings are checked as Viceroy checks them, but this host
	// connects with Go's default TLS configuration, as it does for a
	// static backend's cert_host, use_sni and ca_certificate.
	var ignored []string
	if scheme == "https" && mask&optCACert != 0 {
		if _, st := field(cfgCACert, 64<<10); st != stOK {
			return st
		}
		ignored = append(ignored, "ca_cert")
	}
	var certHost []byte
	if mask&optCertHostname != 0 {
		v, st := field(cfgCertHostname, 1024)
		if st != stOK {
			return st
		}
		if !utf8.Valid(v) {
			return stError // Utf8Expected
		}
		certHost = v
		ignored = append(ignored, "cert_hostname")
	}
	if mask&optSNIHostname != 0 {
		pair, ok := m.Read(cfg+cfgSNIHostname, 8)
		if !ok {
			return stInval
		}
		// An empty SNI host name turns SNI off rather than being refused.
		if binary.LittleEndian.Uint32(pair[4:]) != 0 {
			v, st := field(cfgSNIHostname, 1024)
			if st != stOK {
				return st
			}
			if !utf8.Valid(v) {
				return stError
			}
			// Viceroy's rustls cannot present one name and check another.
			if certHost != nil && string(certHost) != string(v) {
				return stInval
			}
		}
		ignored = append(ignored, "sni_hostname")
	}
	if mask&optClientCert != 0 {
		// Viceroy presents a client certificate from a secret; this host
		// has no TLS client identity to present it with.
		return stUnsupported
	}
	u, err := url.Parse(scheme + "://" + string(target) + "/")
	if err != nil || u.Host == "" || u.Path != "/" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		s.host.logf("dynamic backend %s: invalid target %q", name, target)
		return stError // hyper's InvalidUri
	}
	b.URL = u
	via, err := standIn(string(target))
	if err != nil {
		s.host.logf("dynamic backend %s: %v", name, err)
		return stError
	}
	b.via = via
	if _, _, taken := s.backend(string(name)); taken {
		return stError
	}
	for _, o := range ignored {
		s.host.logf("fastlyhost: dynamic backend %s: %s is accepted, as Viceroy accepts it, but not implemented here", name, o)
	}
	if s.dynamic == nil {
		s.dynamic = map[string]dynamicBackend{}
	}
	s.dynamic[string(name)] = b
	return stOK
}

// validHeaderValue reports whether v may be a header value, as hyper's
// HeaderValue::from_str decides: no control characters but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
