// Package devstack starts the waiting room's whole local stack: Redis (the
// installed redis-server, or an embedded one when there is none), the
// Upstash REST stand-in, a demo origin, and the local Compute host running
// bin/main.wasm with fastly.toml. make serve runs it on fixed ports; the
// end-to-end tests run it on free ones.
package devstack

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redisproc"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// Options say where the stack's parts listen. Use "127.0.0.1:0" for a free
// port.
type Options struct {
	// Manifest is the fastly.toml whose [local_server] the host reads.
	Manifest string
	// Wasm is the service to run.
	Wasm string
	// Addr, UpstashAddr and OriginAddr are where the host, the REST
	// stand-in and the demo origin listen.
	Addr, UpstashAddr, OriginAddr string
	// EmbeddedRedis uses the in-process Redis even when redis-server exists.
	EmbeddedRedis bool
	// CacheDir keeps the host's compiled code.
	CacheDir string
	// Timeout bounds one request's instance in the host.
	Timeout time.Duration
	// Log receives every part's log lines.
	Log *log.Logger
	// LogEndpoints receives the service's log endpoint entries, "NAME ::
	// entry" a line each, as Viceroy prints them; default os.Stdout.
	LogEndpoints io.Writer
	// Adjust, when set, may change the manifest before the host starts.
	Adjust func(*fastlyhost.Manifest)
	// POPs names the points of presence to run: a host each, its own
	// cache and FASTLY_POP, all in front of the one Upstash stand-in and
	// origin, with one manifest. POPs[i] listens on Addr's port plus i
	// (each on a free port when Addr's is 0). Empty: one host, POP XXX.
	POPs []string
	// RecordOrigin keeps every request the demo origin receives, for
	// Stack.OriginRequests: a test that must know what reached the
	// origin sets it (make serve does not, so its memory stays flat).
	RecordOrigin bool
	// GuestCPU has each host add up its instances' CPU time
	// (fastlyhost.Options.GuestCPU), for a benchmark.
	GuestCPU bool
}

// POP is one running host, one point of presence.
type POP struct {
	Name string
	URL  string
	Host *fastlyhost.Host
}

// popCodes name the POPs POPNames hands out: real Fastly POPs, for
// logs that read like the platform's.
var popCodes = []string{"FRA", "LHR", "AMS", "CDG", "IAD", "SJC", "NRT", "SYD"}

// POPNames returns n POP names: FRA, LHR, AMS... then P9, P10...
func POPNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		if i < len(popCodes) {
			names[i] = popCodes[i]
		} else {
			names[i] = fmt.Sprintf("P%d", i+1)
		}
	}
	return names
}

// Stack is a running local stack.
type Stack struct {
	HostURL, UpstashURL, OriginURL string
	RedisAddr                      string
	// RedisKind says which Redis runs: "redis-server" or "embedded".
	RedisKind string
	// Upstash is the REST stand-in, for fault injection and counters.
	Upstash  *upstashdev.Server
	Manifest *fastlyhost.Manifest
	// Host and HostURL are the first POP's.
	Host *fastlyhost.Host
	// POPs are the running hosts, in the order of Options.POPs.
	POPs    []POP
	closers []func()
	token   string
	// origin keeps the demo origin's requests when Options.RecordOrigin
	// is set.
	origin *originLog
}

// Store is a client of the stack's Upstash stand-in with the service's
// token, for tests that act on a room's line directly, as an operator or
// another edge would.
func (s *Stack) Store() *store.Upstash {
	return &store.Upstash{URL: s.UpstashURL, Token: s.token, Transport: native.Upstash{}, Timeout: 10 * time.Second}
}

// ConfigStore and SecretStore are the stores the service reads.
const (
	ConfigStore = "waiting_room_config"
	SecretStore = "waiting_room_secrets"
)

// ForTest is the stack a test of the service starts: the repository's
// fastly.toml and service wasm (see ServiceWasm), found above the test's
// package (testRoot), every server on a free loopback port, the compiled
// module cached across test runs, and the log and the log endpoints'
// entries written to logs. The test adds its own Adjust.
func ForTest(logs io.Writer, timeout time.Duration) Options {
	root := testRoot()
	return Options{
		Manifest: filepath.Join(root, "fastly.toml"), Wasm: ServiceWasm(root),
		Addr: "127.0.0.1:0", UpstashAddr: "127.0.0.1:0", OriginAddr: "127.0.0.1:0",
		CacheDir: filepath.Join(os.TempDir(), "fastlyhost-test-cache"), Timeout: timeout,
		Log: log.New(logs, "", 0), LogEndpoints: logs,
	}
}

// testRoot is the repository's root as seen from a test's package: the
// nearest directory above it that holds fastly.toml (two levels up from
// tools/devstack, three from tools/suites/...), or two levels up when none
// does, for Start to name what is missing.
func testRoot() string {
	root := ".."
	for i := 0; i < 3; i++ {
		if _, err := os.Stat(filepath.Join(root, "fastly.toml")); err == nil {
			return root
		}
		root = filepath.Join(root, "..")
	}
	return filepath.Join("..", "..")
}

// SetRooms defines the service's rooms in m's config store, in order, each
// a name and its JSON definition, and the store timeout.
func SetRooms(m *fastlyhost.Manifest, storeTimeout time.Duration, rooms ...[2]string) {
	cfg := m.ConfigStores[ConfigStore]
	names := make([]string, 0, len(rooms))
	for _, r := range rooms {
		names = append(names, r[0])
		cfg["room."+r[0]] = r[1]
	}
	cfg["rooms"] = strings.Join(names, ",")
	cfg["store_timeout_ms"] = fmt.Sprint(storeTimeout.Milliseconds())
}

// SigningKeys is the key set the running service signs passes with, for a
// test that reads or forges them.
func (s *Stack) SigningKeys() (*queue.KeySet, error) {
	return queue.ParseKeySet(string(s.Manifest.SecretStores[SecretStore]["signing_keys"]))
}

// StoreCalls returns the REST requests the Upstash stand-in served since
// the last call (or the start), and starts counting again.
func (s *Stack) StoreCalls() int { return TakeCalls(s.Upstash) }

// TakeCalls returns the REST requests u served since the last call (or
// its start), and starts counting again.
func TakeCalls(u *upstashdev.Server) int {
	n := 0
	for _, c := range u.Stats().Requests {
		n += c
	}
	u.ResetStats()
	return n
}

// ServiceWasm is the service a test runs: $WASM when it is set (make test
// sets it), else bin/main.wasm in the repository at root.
func ServiceWasm(root string) string {
	if p := os.Getenv("WASM"); p != "" {
		return p
	}
	return filepath.Join(root, "bin", "main.wasm")
}

// Start brings the stack up, or tears down what it started and says why.
func Start(ctx context.Context, o Options) (*Stack, error) {
	if o.Log == nil {
		o.Log = log.Default()
	}
	s := &Stack{}
	if err := s.start(ctx, o); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Stack) start(ctx context.Context, o Options) error {
	m, err := fastlyhost.LoadManifest(o.Manifest)
	if err != nil {
		return err
	}
	s.Manifest = m
	if err := s.startRedis(o); err != nil {
		return err
	}
	token := "dev-upstash-token"
	if v, ok := m.SecretStores[SecretStore]["upstash_token"]; ok {
		token = string(v)
	}
	s.token = token
	s.Upstash = upstashdev.New(s.RedisAddr, token)
	if s.UpstashURL, err = s.serve(o.UpstashAddr, s.Upstash); err != nil {
		return fmt.Errorf("upstash stand-in: %w", err)
	}
	origin := DemoOrigin()
	if o.RecordOrigin {
		s.origin = &originLog{}
		origin = s.origin.wrap(origin)
	}
	if s.OriginURL, err = s.serve(o.OriginAddr, origin); err != nil {
		return fmt.Errorf("demo origin: %w", err)
	}
	// The manifest's backends and the config's upstash_url follow the
	// ports actually taken.
	for name, target := range map[string]string{"origin": s.OriginURL, "upstash": s.UpstashURL} {
		u, _ := url.Parse(target + "/")
		m.Backends[name] = fastlyhost.Backend{URL: u}
	}
	if cfg, ok := m.ConfigStores[ConfigStore]; ok {
		cfg["upstash_url"] = s.UpstashURL
	}
	if o.Adjust != nil {
		o.Adjust(m)
	}
	wasm, err := os.ReadFile(o.Wasm)
	if err != nil {
		return fmt.Errorf("%w (run make build)", err)
	}
	pops := o.POPs
	if len(pops) == 0 {
		pops = []string{""}
	}
	for i, name := range pops {
		addr, err := popAddr(o.Addr, i)
		if err != nil {
			return err
		}
		host, err := fastlyhost.New(ctx, wasm, m, fastlyhost.Options{CacheDir: o.CacheDir, Timeout: o.Timeout, Log: o.Log, LogEndpoints: o.LogEndpoints, POP: name, GuestCPU: o.GuestCPU})
		if err != nil {
			return err
		}
		s.closers = append(s.closers, func() { host.Close(context.Background()) })
		u, err := s.serve(addr, host)
		if err != nil {
			return fmt.Errorf("host %s: %w", name, err)
		}
		s.POPs = append(s.POPs, POP{Name: name, URL: u, Host: host})
	}
	s.Host, s.HostURL = s.POPs[0].Host, s.POPs[0].URL
	return nil
}

// popAddr is where the i-th POP listens: addr with its port plus i, or a
// free port when addr's is 0.
func popAddr(addr string, i int) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("host address %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p+i > 65535 {
		return "", fmt.Errorf("host address %q: the port is not a number with room for %d POPs", addr, i+1)
	}
	if p == 0 {
		return addr, nil
	}
	return net.JoinHostPort(host, strconv.Itoa(p+i)), nil
}

// serve listens on addr and serves h until Close.
func (s *Stack) serve(addr string, h http.Handler) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	})
	return "http://" + l.Addr().String(), nil
}

func (s *Stack) startRedis(o Options) error {
	if _, err := exec.LookPath("redis-server"); o.EmbeddedRedis || err != nil {
		mr := miniredis.NewMiniRedis()
		if err := mr.Start(); err != nil {
			return fmt.Errorf("embedded redis: %w", err)
		}
		s.closers = append(s.closers, mr.Close)
		s.RedisAddr, s.RedisKind = mr.Addr(), "embedded"
		return nil
	}
	srv, err := redisproc.Start()
	if err != nil {
		return err
	}
	s.closers = append(s.closers, srv.Close)
	s.RedisAddr, s.RedisKind = srv.Addr, "redis-server"
	return nil
}

// Close stops every part, the last started first.
func (s *Stack) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}
