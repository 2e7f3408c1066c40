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
	"net/http"
	"sort"
	"strings"
	"sync"
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
}

// Host serves HTTP by running the guest once per request.
type Host struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	manifest *Manifest
	client   *http.Client
	log      *log.Logger
	timeout  time.Duration
	bound    []string
	stubbed  []string
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
	h := &Host{rt: rt, manifest: m, log: o.Log, timeout: o.Timeout,
		client: &http.Client{
			Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64, ForceAttemptHTTP2: false},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	compiled, err := rt.CompileModule(ctx, mergeDataSegments(wasm))
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("compile: %w", err)
	}
	h.compiled = compiled
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasi: %w", err)
	}
	if err := h.bindImports(ctx); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return h, nil
}

// bindImports defines every fastly_* function the module imports.
func (h *Host) bindImports(ctx context.Context) error {
	builders := map[string]wazero.HostModuleBuilder{}
	seen := map[string]bool{}
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
		} else {
			h.stubbed = append(h.stubbed, module+"."+name)
		}
		results := len(fn.ResultTypes())
		params := fn.ParamTypes()
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
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

// Close frees the runtime.
func (h *Host) Close(ctx context.Context) error { return h.rt.Close(ctx) }

func (h *Host) logf(format string, args ...any) { h.log.Printf(format, args...) }

// ServeHTTP runs one fresh guest instance for the request.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.timeout)
	defer cancel()
	r = r.WithContext(ctx)
	s := &state{
		host: h, w: w, client: r, started: time.Now(),
		reqs: map[uint32]*request{}, resps: map[uint32]*response{}, bodies: map[uint32]*body{},
		pendings: map[uint32]*pending{}, configs: map[uint32]map[string]string{},
		kvs: map[uint32]map[string]KVEntry{}, lookups: map[uint32]*KVEntry{},
		secretSt: map[uint32]map[string][]byte{}, secrets: map[uint32][]byte{}, logs: map[uint32]string{},
	}
	s.next = 1 // handle 1 is the downstream request and its body
	header := r.Header.Clone()
	header.Set("Host", r.Host)
	// The request target as the client sent it, not re-encoded from
	// r.URL, as Viceroy's prepare_request (src/downstream.rs) keeps it.
	s.reqs[1] = &request{method: r.Method, uri: "http://" + r.Host + pathAndQuery(r.RequestURI), header: header}
	s.bodies[1] = &body{src: r.Body, srcLen: r.ContentLength}

	out := &lineWriter{log: h.log}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithArgs("main.wasm").
		WithStdout(out).WithStderr(out).
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().
		WithRandSource(rand.Reader).
		WithEnv("FASTLY_HOSTNAME", "localhost").
		WithEnv("FASTLY_SERVICE_VERSION", "0").
		WithEnv("FASTLY_TRACE_ID", traceID())
	mod, err := h.rt.InstantiateModule(experimental.WithMemoryAllocator(context.WithValue(ctx, stateKey{}, s), memoryAllocator), h.compiled, cfg)
	if mod != nil {
		mod.Close(context.Background())
	}
	out.Flush()
	var exit *sys.ExitError
	switch {
	case err == nil, errors.As(err, &exit) && exit.ExitCode() == 0:
		err = nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("no answer within %v", h.timeout)
	}
	s.mu.Lock()
	sent := s.sent
	s.mu.Unlock()
	switch {
	case err != nil && !sent:
		code := http.StatusInternalServerError
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			code = http.StatusGatewayTimeout
		}
		h.logf("%s %s: guest failed: %v", r.Method, r.URL.RequestURI(), err)
		http.Error(w, fmt.Sprintf("fastlyhost: the service failed: %v", err), code)
	case err != nil:
		h.logf("%s %s: guest failed after answering: %v", r.Method, r.URL.RequestURI(), err)
	case !sent:
		h.logf("%s %s: guest sent no response", r.Method, r.URL.RequestURI())
		http.Error(w, "fastlyhost: the service sent no response", http.StatusInternalServerError)
	}
}

func traceID() string {
	var b [8]byte
	rand.Read(b[:])
	return fmt.Sprintf("%x", b)
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
