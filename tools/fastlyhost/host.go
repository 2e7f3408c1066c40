// Package fastlyhost runs a Fastly Compute service's wasm locally, in the
// role Viceroy plays for `fastly compute serve`: one fresh instance per
// request, the Fastly host calls the service imports, and the stores and
// backends of fastly.toml's [local_server] section.
//
// The module is compiled once. Its imports are bound from the module's own
// import list: each Fastly call is either implemented here or deliberately
// answered with Unsupported, so signatures can never mismatch and a new SDK
// call shows up in the import guard test instead of failing at run time.
// A guest that traps, panics, exhausts its memory or never answers gives the
// client a 500 or 504 and the log a line saying why; the host goes on.
package fastlyhost

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// Options tune a Host.
type Options struct {
	// CacheDir keeps compiled code between runs; empty compiles afresh.
	CacheDir string
	// Timeout bounds one request's instance; default 60 s.
	Timeout time.Duration
	// MemoryLimitMiB bounds one instance's memory; default 128, as Compute.
	MemoryLimitMiB uint32
	// Log receives the host's and the guest's log lines; default log.Default().
	Log *log.Logger
	// LogEndpoints receives the entries the guest writes to its log
	// endpoints, a line each, "NAME :: entry", as Viceroy prints them;
	// default os.Stdout, where Viceroy prints them.
	LogEndpoints io.Writer
	// Clock is the host's time for what outlives an instance: Edge Rate
	// Limiting's counters and penalty boxes, and the time to live of KV
	// items. Default time.Now; a test passes its own to let minutes pass
	// at once. The guest's own clock (WASI) is always the real one.
	Clock func() time.Time
	// POP names the point of presence the host plays, which the guest
	// reads in FASTLY_POP; default Viceroy's XXX. Each Host is its own
	// POP, with its own cache (cache.go).
	POP string
	// GuestCPU clocks every instance's CPU time, as for get_vcpu_ms, and
	// adds it up for Host.GuestCPU. A benchmark sets it: it costs a
	// thread per instance.
	GuestCPU bool
}

// Host serves HTTP by running the guest once per request.
type Host struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	// memory makes each instance's memory (moduleMemory): on Linux, a
	// copy-on-write mapping of the module's initial memory, as Wasmtime's;
	// releaseMemory frees what it holds once the host is closed.
	memory        experimental.MemoryAllocator
	releaseMemory func()
	manifest      *Manifest
	client        *http.Client
	log           *log.Logger
	timeout       time.Duration
	bound         []string
	stubbed       []string

	// requests numbers the client requests as Viceroy does, from 0; a
	// sandbox is numbered by its first request.
	requests atomic.Uint64
	// sandboxes counts the instances started to serve client requests.
	sandboxes atomic.Uint64
	// waiting are the sandboxes' promises to take a request, the latest
	// last (see sandbox.go).
	waitMu  sync.Mutex
	waiting []*waiter
	// closing is closed by Close, to end the waits for requests; running
	// counts the instances serving requests, which Close waits for before
	// it frees their memory.
	closing   chan struct{}
	closeOnce sync.Once
	running   sync.WaitGroup
	// live counts the same instances, for Host.Live.
	live atomic.Int64

	// measuresCPU is set when the module imports get_vcpu_ms, whose
	// clock instantiate then starts (runtime.go).
	measuresCPU bool
	// sumsCPU is Options.GuestCPU; guestCPU adds up the CPU time of the
	// instances that ended.
	sumsCPU  bool
	guestCPU atomic.Int64
	// calls counts the guests' calls of each fastly import, by
	// "module.name" (set up by bindImports, read-only after).
	calls map[string]*atomic.Uint64

	sharedMu sync.Mutex
	shared   map[string]any   // see shared in handles.go
	clock    func() time.Time // Options.Clock
	pop      string           // Options.POP

	// endpoints is Options.LogEndpoints, one entry at a time.
	endpointsMu sync.Mutex
	endpoints   io.Writer
}

type stateKey struct{}

// New compiles wasm and binds its imports.
func New(ctx context.Context, wasm []byte, m *Manifest, o Options) (*Host, error) {
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.MemoryLimitMiB == 0 {
		o.MemoryLimitMiB = 128
	}
	if o.Log == nil {
		o.Log = log.Default()
	}
	if o.LogEndpoints == nil {
		o.LogEndpoints = os.Stdout
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	cfg := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(o.MemoryLimitMiB * 16) // 64 KiB pages
	if o.CacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(o.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache %s: %w", o.CacheDir, err)
		}
		cfg = cfg.WithCompilationCache(cache)
	}
	for _, setting := range m.Ignored {
		o.Log.Printf("fastlyhost: %s is accepted, as Viceroy accepts it, but not implemented here", setting)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	h := &Host{rt: rt, manifest: m, log: o.Log, endpoints: o.LogEndpoints, timeout: o.Timeout, closing: make(chan struct{}), clock: o.Clock, pop: o.POP, sumsCPU: o.GuestCPU,
		client: &http.Client{
			Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64, ForceAttemptHTTP2: false},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	module, memory, release := moduleMemory(wasm)
	h.memory, h.releaseMemory = memory, sync.OnceFunc(release)
	compiled, err := rt.CompileModule(ctx, module)
	if err != nil {
		rt.Close(ctx)
		release()
		return nil, fmt.Errorf("compile: %w", err)
	}
	h.compiled = compiled
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		release()
		return nil, fmt.Errorf("wasi: %w", err)
	}
	if err := h.bindImports(ctx); err != nil {
		rt.Close(ctx)
		release()
		return nil, err
	}
	return h, nil
}

// bindImports defines every fastly_* function the module imports.
func (h *Host) bindImports(ctx context.Context) error {
	builders := map[string]wazero.HostModuleBuilder{}
	seen := map[string]bool{}
	h.calls = map[string]*atomic.Uint64{}
	for _, fn := range h.compiled.ImportedFunctions() {
		module, name, _ := fn.Import()
		if !strings.HasPrefix(module, "fastly") || seen[module+"."+name] {
			continue
		}
		seen[module+"."+name] = true
		b, ok := builders[module]
		if !ok {
			b = h.rt.NewHostModuleBuilder(module)
			builders[module] = b
		}
		impl, implemented := hostcalls[module+"."+name]
		if implemented {
			h.bound = append(h.bound, module+"."+name)
			h.measuresCPU = h.measuresCPU || module+"."+name == vcpuCall
		} else {
			h.stubbed = append(h.stubbed, module+"."+name)
		}
		results := len(fn.ResultTypes())
		params := fn.ParamTypes()
		calls := &atomic.Uint64{}
		h.calls[module+"."+name] = calls
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			calls.Add(1)
			// An i32 arrives in the low half of a stack slot; the high half
			// is not guaranteed to be zero.
			for i, t := range params {
				if t == api.ValueTypeI32 {
					stack[i] = uint64(uint32(stack[i]))
				}
			}
			st := stUnsupported
			if s, ok := ctx.Value(stateKey{}).(*state); ok && implemented {
				st = impl(ctx, s, mod.Memory(), stack)
			}
			if results > 0 {
				stack[0] = uint64(st)
			}
		}), fn.ParamTypes(), fn.ResultTypes()).Export(name)
	}
	for module, b := range builders {
		if _, err := b.Instantiate(ctx); err != nil {
			return fmt.Errorf("host module %s: %w", module, err)
		}
	}
	sort.Strings(h.bound)
	sort.Strings(h.stubbed)
	return nil
}

// Imports lists the module's Fastly imports the host implements, and those
// it answers with Unsupported.
func (h *Host) Imports() (bound, stubbed []string) { return h.bound, h.stubbed }

// Close ends the sandboxes' waits for a next request, waits for every
// instance to end, and frees the runtime.
func (h *Host) Close(ctx context.Context) error {
	h.closeOnce.Do(func() { close(h.closing) })
	h.running.Wait()
	err := h.rt.Close(ctx)
	h.releaseMemory()
	return err
}

func (h *Host) logf(format string, args ...any) { h.log.Printf(format, args...) }

// ServeHTTP serves the request with a sandbox waiting for one, or with a
// fresh instance.
//
// A request whose target cannot be made the URL the guest reads is
// answered 400 here and never reaches the guest (see readableTarget).
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := readableTarget(r); err != nil {
		h.logf("%q %q (Host %q): refused: the target cannot be made a URL: %v", r.Method, r.RequestURI, r.Host, err)
		http.Error(w, "fastlyhost: the request target cannot be made a URL", http.StatusBadRequest)
		return
	}
	d := newDownstream(w, r, h.requests.Add(1)-1)
	if !h.handOff(d) {
		h.spawn(d)
	}
	<-d.released
	h.answer(d)
}

// readableTarget checks that r names a resource the guest can read as a
// URL: its target is a path or an absolute URL (not OPTIONS's * nor
// CONNECT's authority), and the URI the guest gets, after the Host, parses
// as the SDK parses it (fsthttp uses url.ParseRequestURI, and panics when
// it fails). net/http accepts a Host such as "a%zz" or "exa[mple", and an
// absolute target whose host has a zone without its %25, that fail there.
// Viceroy too refuses a request it cannot make a URI of before the guest
// runs (prepare_request in src/downstream.rs).
func readableTarget(r *http.Request) error {
	if !strings.HasPrefix(r.RequestURI, "/") && !r.URL.IsAbs() {
		return errors.New("the target is neither a path nor an absolute URL")
	}
	_, err := url.ParseRequestURI(guestURI(r))
	return err
}

// Run runs the module once as a WASI command, as `viceroy run` does (its
// ExecuteCtx::run_main): argv is the program name and args, the Fastly
// calls are available, and the downstream request is Viceroy's placeholder,
// GET http://example.com/ from 127.0.0.1:0 to 127.0.0.1:80, whose response
// goes nowhere. The result is the process exit code Viceroy gives: the
// guest's proc_exit code, 128+SIGABRT for a trap, 1 for any other failure.
// Run has no time limit but ctx's, as Viceroy's run has none.
func (h *Host) Run(ctx context.Context, program string, args []string, stdout, stderr io.Writer) (int, error) {
	r := httptest.NewRequest(http.MethodGet, "http://example.com/", nil)
	r.RemoteAddr = "127.0.0.1:0"
	r = r.WithContext(context.WithValue(ctx, http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}))
	// Its request ID is 0, taken from no count (run_main in src/execute.rs).
	sb := h.newSandbox(ctx, newDownstream(discard{}, r, 0), 0)
	err := sb.run(append([]string{program}, args...), stdout, stderr)
	var exit *sys.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit) && ctx.Err() == nil:
		return int(uint8(exit.ExitCode())), nil
	case ctx.Err() != nil:
		return 1, ctx.Err()
	case isTrap(err):
		return 128 + int(syscall.SIGABRT), err
	}
	return 1, err
}

// isTrap reports whether err is the guest trapping (unreachable, an out of
// bounds access, a stack overflow...) rather than the host failing it.
func isTrap(err error) bool {
	return strings.Contains(err.Error(), "wasm error:")
}

// discard is the placeholder downstream's response writer in Run.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

// newState makes the handle tables of one instance.
func (h *Host) newState() *state {
	return &state{
		host: h, started: time.Now(),
		reqs: map[uint32]*request{}, resps: map[uint32]*response{}, bodies: map[uint32]*body{},
		pendings: map[uint32]*pending{}, logs: map[uint32]string{},
		objects: map[uint32]any{},
	}
}

// instantiate runs one instance of the module to its end: _start, with
// argv and the FASTLY_* environment Viceroy gives every instance
// (make_wasi_ctx in its src/linking.rs).
func (h *Host) instantiate(sb *sandbox, argv []string, stdout, stderr io.Writer) error {
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithArgs(argv...).
		WithStdout(stdout).WithStderr(stderr).
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().
		WithRandSource(rand.Reader)
	for _, kv := range viceroyEnv {
		cfg = cfg.WithEnv(kv[0], kv[1])
	}
	if h.pop != "" {
		cfg = cfg.WithEnv("FASTLY_POP", h.pop)
	}
	// Trace IDs count up from 0 rather than being random, as Viceroy's do,
	// for ease of testing.
	cfg = cfg.WithEnv("FASTLY_TRACE_ID", fmt.Sprintf("%032x", sb.id))
	ctx := context.WithValue(context.WithValue(sb.ctx, stateKey{}, sb.state), sandboxKey{}, sb)
	if h.measuresCPU || h.sumsCPU {
		// Pinning the instance to a thread costs a thread per instance,
		// so only a module that can ask for get_vcpu_ms, or a host asked
		// to add up its instances' CPU, pays it.
		var unpin func()
		ctx, unpin = withGuestCPU(ctx)
		defer unpin()
		if h.sumsCPU {
			c := ctx.Value(guestCPUKey{}).(*guestCPU)
			defer func() { h.guestCPU.Add(int64(c.used())) }()
		}
	}
	mod, err := h.rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, h.memory), h.compiled, cfg)
	if mod != nil {
		mod.Close(context.Background())
	}
	return err
}

// viceroyEnv is the environment Viceroy stubs for compatibility with the
// platform's, and FASTLY_HOSTNAME=localhost, by which a service knows it
// runs locally.
var viceroyEnv = [][2]string{
	{"FASTLY_CACHE_GENERATION", "0"},
	{"FASTLY_CUSTOMER_ID", "0000000000000000000000"},
	{"FASTLY_POP", "XXX"},
	{"FASTLY_REGION", "Somewhere"},
	{"FASTLY_SERVICE_ID", "0000000000000000000000"},
	{"FASTLY_SERVICE_VERSION", "0"},
	{"FASTLY_HOSTNAME", "localhost"},
	{"FASTLY_IS_STAGING", "0"},
}

// lineWriter logs a guest's output a line at a time.
type lineWriter struct {
	mu  sync.Mutex
	log *log.Logger
	buf bytes.Buffer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err == io.EOF {
			l.buf.WriteString(line)
			return len(p), nil
		}
		l.log.Print("guest: " + strings.TrimRight(line, "\n"))
	}
}

// Flush logs a last unterminated line.
func (l *lineWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() > 0 {
		l.log.Print("guest: " + l.buf.String())
		l.buf.Reset()
	}
}
