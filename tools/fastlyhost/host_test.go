package fastlyhost

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// buildGuest builds the Go guest program testdata/<name> for wasip1.
func buildGuest(name string) ([]byte, error) {
	out := filepath.Join(os.TempDir(), "fastlyhost-test-"+name+".wasm")
	cmd := exec.Command("go", "build", "-o", out, "./testdata/"+name)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build testdata/%s: %v\n%s", name, err, b)
	}
	return os.ReadFile(out)
}

// mustBuildGuest is buildGuest for one test.
func mustBuildGuest(t *testing.T, name string) []byte {
	t.Helper()
	wasm, err := buildGuest(name)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// buildTinyGoGuest builds testdata/<name> with TinyGo, through
// tools/build-wasm run-tinygo (which runs it with the Go it needs), in a
// scratch module that requires the tools module's SDK: TinyGo before 0.37
// compiles against Go 1.23, older than the tools module's. Where no usable
// TinyGo is installed it skips the test, unless REQUIRE_TINYGO is set (as
// in CI).
func buildTinyGoGuest(t *testing.T, name string) []byte {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "build-wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if why, err := exec.Command(script, "check-tinygo").CombinedOutput(); err != nil {
		if os.Getenv("REQUIRE_TINYGO") != "" {
			t.Fatalf("TinyGo is required here: %s", why)
		}
		t.Skipf("no TinyGo build of testdata/%s: %s", name, bytes.TrimSpace(why))
	}
	// The scratch module's go line is the SDK's, which a module requiring
	// it must have at least.
	sdk, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.GoVersion}}", "github.com/fastly/compute-sdk-go").Output()
	version, goVersion, found := strings.Cut(strings.TrimSpace(string(sdk)), " ")
	if err != nil || !found {
		t.Fatalf("the SDK's version: %q, %v", sdk, err)
	}
	dir := t.TempDir()
	files := map[string][]byte{"go.mod": []byte("module " + name + "\n\ngo " + goVersion + "\n\nrequire github.com/fastly/compute-sdk-go " + version + "\n")}
	sources, _ := filepath.Glob(filepath.Join("testdata", name, "*.go"))
	for _, src := range append(sources, filepath.Join("..", "go.sum")) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(src)] = b
	}
	// A TinyGo build takes most of a minute and caches nothing of the
	// program, so its result is kept, keyed by TinyGo's version and every
	// input: make test runs this package twice.
	tinygo, err := exec.Command(script, "run-tinygo", "version").Output()
	if err != nil {
		t.Fatalf("tinygo version: %v", err)
	}
	key := sha256.New()
	key.Write(tinygo)
	for _, file := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(key, "%s %d\n", file, len(files[file]))
		key.Write(files[file])
	}
	cached := filepath.Join(os.TempDir(), fmt.Sprintf("fastlyhost-test-%s-tinygo-%x.wasm", name, key.Sum(nil)[:8]))
	if wasm, err := os.ReadFile(cached); err == nil {
		return wasm
	}
	for file, b := range files {
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, name+".wasm")
	cmd := exec.Command(script, "run-tinygo", "build", "-target=wasip1", "-no-debug", "-o", out, ".")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("TinyGo build of testdata/%s: %v\n%s", name, err, b)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Moved into place whole, so a concurrent run never reads half of it.
	os.Rename(out, cached)
	return wasm
}

// guestWasm builds testdata/guest once for the package's tests.
var guestWasm = sync.OnceValues(func() ([]byte, error) { return buildGuest("guest") })

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startGuest(t *testing.T) (*httptest.Server, *syncBuffer) {
	return startGuestTimeout(t, 3*time.Second)
}

// startGuestTimeout starts the test guest with the given instance timeout.
func startGuestTimeout(t *testing.T, timeout time.Duration) (*httptest.Server, *syncBuffer) {
	t.Helper()
	return startGuestWith(t, timeout, nil)
}

// startGuestWith starts the test guest; adjust, when set, may change the
// manifest first.
func startGuestWith(t *testing.T, timeout time.Duration, adjust func(*Manifest)) (*httptest.Server, *syncBuffer) {
	t.Helper()
	wasm, err := guestWasm()
	if err != nil {
		t.Fatal(err)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			for i := 0; i < 64; i++ {
				w.Write(bytes.Repeat([]byte{byte(i)}, 64<<10))
			}
			return
		}
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		w.Header().Set("X-Origin-Host", r.Host)
		fmt.Fprintf(w, "%s %s %d %x", r.Method, r.RequestURI, n, h.Sum(nil))
	}))
	t.Cleanup(origin.Close)
	u, _ := url.Parse(origin.URL + "/prefix/")
	closed, _ := url.Parse("http://127.0.0.1:1")
	m := &Manifest{
		Backends:     map[string]Backend{"origin": {URL: u}, "closed": {URL: closed}, "override": {URL: u, OverrideHost: "override.test"}},
		ConfigStores: map[string]map[string]string{"cfg": {"greeting": "hello", "long": strings.Repeat("L", 7000)}},
		KVStores:     map[string]map[string]KVEntry{"kv": {"k": {Data: bytes.Repeat([]byte("v"), 20000), Metadata: "meta"}}},
		SecretStores: map[string]map[string][]byte{"sec": {"token": []byte("s3cret")}},
		Geo:          map[string]map[string]any{"127.0.0.1": {"country_code": "NL", "city": "Amsterdam"}},
	}
	if adjust != nil {
		adjust(m)
	}
	return serveHost(t, wasm, m, timeout)
}

// serveHost serves wasm with a Host over HTTP for the test, with m as its
// manifest and timeout per instance, and returns the host's log.
func serveHost(t *testing.T, wasm []byte, m *Manifest, timeout time.Duration) (*httptest.Server, *syncBuffer) {
	t.Helper()
	return serveHostWith(t, wasm, m, Options{Timeout: timeout})
}

// serveHostWith is serveHost with the host's options o, whose log and
// compilation cache it sets.
func serveHostWith(t *testing.T, wasm []byte, m *Manifest, o Options) (*httptest.Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	o.Log, o.CacheDir = log.New(logs, "", 0), filepath.Join(os.TempDir(), "fastlyhost-test-cache")
	if o.LogEndpoints == nil {
		o.LogEndpoints = logs
	}
	h, err := New(context.Background(), wasm, m, o)
	if err != nil {
		t.Fatal(err)
	}
	// Close returns only once every instance, waiting sandboxes too, has
	// ended.
	t.Cleanup(func() { h.Close(context.Background()) })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, logs
}

func get(t *testing.T, target string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestHostCalls(t *testing.T) {
	srv, logs := startGuest(t)
	long := strings.Repeat("y", 20000)
	many := http.Header{"X-Long": {long}}
	for i := 0; i < 150; i++ {
		many.Add("X-Dup", fmt.Sprint(i))
	}
	tests := []struct {
		name, path string
		header     http.Header
		wantStatus int
		wantBody   string
	}{
		{"default answer", "/", nil, 418, "xxxxxxxxxx"},
		{"headers page over many calls", "/headers?a=1", many, 200, "long 20000"},
		{"method, uri and host", "/headers?a=1", nil, 200, "/headers?a=1; method GET"},
		{"config store", "/config?store=cfg&key=greeting", nil, 200, "hello|<nil>"},
		{"config value over the first buffer", "/config?store=cfg&key=long", nil, 200, strings.Repeat("L", 7000) + "|<nil>"},
		{"config key missing", "/config?store=cfg&key=nope", nil, 200, "|key not found"},
		{"config store missing", "/config?store=nope&key=x", nil, 200, "open: config store not found"},
		{"kv store", "/kv?store=kv&key=k", nil, 200, strings.Repeat("v", 20000) + "|meta"},
		{"kv key missing", "/kv?store=kv&key=nope", nil, 200, "lookup: kvstore: key not found"},
		{"kv store missing", "/kv?store=nope&key=k", nil, 200, "open: kvstore: store not found"},
		{"secret", "/secret?store=sec&key=token", nil, 200, "s3cret|<nil>"},
		{"secret missing", "/secret?store=sec&key=nope", nil, 200, "|secret not found"},
		{"geo from the table", "/geo", nil, 200, "127.0.0.1 NL Amsterdam"},
		{"log endpoint", "/log", nil, 200, "logged <nil>"},
		{"vcpu", "/vcpu", nil, 200, "true <nil>"},
		{"unknown backend", "/nobackend", nil, 200, "true"},
		{"backend refusing", "/refused", nil, 200, "error: true"},
		{"proxy keeps path prefix, query and method", "/proxy?q=1", nil, 200, "GET /prefix/proxy?q=1 0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := get(t, srv.URL+tc.path, tc.header)
			if resp.StatusCode != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Fatalf("got %d %.200q, want %d containing %.200q", resp.StatusCode, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
	resp, body := get(t, srv.URL+"/headers", many)
	if want := fmt.Sprintf("%d values", 150+1+1+2); !strings.HasPrefix(body, want) {
		t.Errorf("request headers: %q, want %q (150 X-Dup, X-Long, Host, Accept-Encoding, User-Agent)", body[:20], want)
	}
	if len(resp.Header.Values("X-Many")) != 100 || resp.Header.Get("X-Long") != long {
		t.Errorf("response headers: %d X-Many, X-Long of %d bytes", len(resp.Header.Values("X-Many")), len(resp.Header.Get("X-Long")))
	}
	if !strings.Contains(logs.String(), "events :: hello from the guest\n") {
		t.Errorf("log endpoint line missing: %s", logs)
	}
}

func TestHostHeaderRule(t *testing.T) {
	srv, _ := startGuest(t)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/proxy", nil)
	req.Host = "visitor.test"
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if got := r.Header.Get("X-Origin-Host"); got != "visitor.test" {
		t.Fatalf("origin saw Host %q, want the guest request's Host (no override_host)", got)
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/proxy?backend=override", nil)
	req.Host = "visitor.test"
	if r, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if got := r.Header.Get("X-Origin-Host"); got != "override.test" {
		t.Fatalf("origin saw Host %q, want the backend's override_host", got)
	}
}

func TestStreamingBothWays(t *testing.T) {
	// 10 MB each way through the guest: on a machine running two other
	// suites, the default 3 s instance timeout was not enough (CI rehearsal).
	srv, _ := startGuestTimeout(t, time.Minute)
	big := bytes.Repeat([]byte("0123456789"), 1_000_000)
	sum := sha256.Sum256(big)
	resp, err := http.Post(srv.URL+"/upload", "application/octet-stream", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("%d %x <nil>", len(big), sum); string(b) != want {
		t.Fatalf("upload: %q, want %q", b, want)
	}
	resp, err = http.Post(srv.URL+"/proxy", "application/octet-stream", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("POST /prefix/proxy %d %x", len(big), sum); string(b) != want {
		t.Fatalf("upload through to the origin: %q, want %q", b, want)
	}
	// The first chunk arrives before the guest has written the last.
	start := time.Now()
	resp, err = http.Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	first := time.Since(start)
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	total := time.Since(start)
	if line != "chunk 0\n" || !strings.Contains(string(rest), "chunk 2") {
		t.Fatalf("stream: %q then %q", line, rest)
	}
	if first >= total-300*time.Millisecond {
		t.Fatalf("first chunk after %v of %v: the response was buffered, not streamed", first, total)
	}
}

func TestGuestFailuresAreContained(t *testing.T) {
	// Long enough that exhausting 128 MiB finishes first on a busy machine;
	// the endless loop then takes the whole timeout.
	srv, logs := startGuestTimeout(t, 10*time.Second)
	tests := []struct {
		path, wantLog string
		wantStatus    int
	}{
		{"/panic", "the guest gave up", 500},
		{"/loop", "no answer within", 504},
		{"/oom", "guest failed", 500},
		{"/exit", "sent no response", 500},
	}
	var wg sync.WaitGroup
	for _, tc := range tests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := get(t, srv.URL+tc.path, nil)
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("%s: %d, want %d", tc.path, resp.StatusCode, tc.wantStatus)
			}
		}()
	}
	// Healthy requests are served meanwhile.
	for i := 0; i < 5; i++ {
		if resp, body := get(t, srv.URL+"/", nil); resp.StatusCode != 418 || body != "xxxxxxxxxx" {
			t.Errorf("healthy request during failures: %d %q", resp.StatusCode, body)
		}
	}
	wg.Wait()
	for _, tc := range tests {
		if !strings.Contains(logs.String(), tc.wantLog) {
			t.Errorf("%s: no log line with %q", tc.path, tc.wantLog)
		}
	}
	if resp, _ := get(t, srv.URL+"/", nil); resp.StatusCode != 418 {
		t.Fatalf("after the failures the host answers %d", resp.StatusCode)
	}
}

// serviceWasm is the artifact under test: $WASM, or the repository's
// bin/main.wasm (make build).
func serviceWasm(t *testing.T) []byte {
	t.Helper()
	path := os.Getenv("WASM")
	if path == "" {
		path = filepath.Join("..", "..", "bin", "main.wasm")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the service's wasm: %v (run make build, or set WASM)", err)
	}
	return b
}

// TestServiceImportsAreAllKnown fails when the service starts importing a
// Fastly call the host neither implements nor lists as unsupported.
func TestServiceImportsAreAllKnown(t *testing.T) {
	h, err := New(context.Background(), serviceWasm(t), &Manifest{}, Options{CacheDir: filepath.Join(os.TempDir(), "fastlyhost-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	bound, stubbed := h.Imports()
	for _, name := range stubbed {
		module, fn, _ := strings.Cut(name, ".")
		if !IsUnsupported(module, fn) {
			t.Errorf("the service imports %s, which the host neither implements nor lists in Unsupported", name)
		}
	}
	if len(bound) < 40 {
		t.Fatalf("only %d Fastly calls bound: %v", len(bound), bound)
	}
	t.Logf("%d Fastly calls bound, %d answered Unsupported", len(bound), len(stubbed))
}
