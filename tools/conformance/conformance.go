// Package conformance runs the Fastly Go SDK's own test suites against
// fastlyhost, the project's local Compute host, as the SDK's Makefile runs
// them against Viceroy. No one here wrote those tests, which makes them the
// best independent check that the host behaves as Viceroy does.
//
// The model: the SDK's source comes from the module cache and is copied to
// a scratch directory (the cache is read-only, and the copy's fastly.toml
// files get their internet backends pointed at a local stand-in). Each
// package that carries a fastly.toml is one unit of work, of one of three
// kinds, run under each build (Go, TinyGo):
//
//   - integration (integration_tests/*): the test binary is a wasm module
//     run by `fastlyhost run -C fastly.toml`, as `go test -exec "viceroy
//     run -C fastly.toml"` runs it;
//   - end to end (end_to_end_tests/*): the package's service is built and
//     served by fastlyhost on 127.0.0.1:23456 first, as the SDK's serve.sh
//     does with `fastly compute serve`, and the test binary reaches it
//     through a backend;
//   - unit (any other package with a fastly.toml): built with
//     nofastlyhostcalls, as the SDK's test-unit targets build them.
//
// Each run's verbose output is parsed into an Outcome, compared with
// Expected (what the host is known to pass, and why it fails the rest) and
// rendered as the README's table.
package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
)

// Kind is how a package's tests are run.
type Kind int

// The kinds of package, by how the SDK's Makefile runs them.
const (
	Integration Kind = iota
	EndToEnd
	Unit
)

func (k Kind) String() string {
	return [...]string{"integration", "end to end", "unit"}[k]
}

// Package is one SDK package with its own fastly.toml.
type Package struct {
	// Dir is the package's directory relative to the SDK's root, with
	// forward slashes: "integration_tests/acl".
	Dir  string
	Kind Kind
	// StandIn is set when the package's fastly.toml names internet
	// backends that the copy points at the local stand-in.
	StandIn bool
}

// Build is the compiler a run's wasm comes from.
type Build string

// The two builds every package runs under.
const (
	Go     Build = "Go"
	TinyGo Build = "TinyGo"
)

// Discover lists the packages under sdk that carry a fastly.toml, leaving
// out _examples (services, not tests), in a stable order.
func Discover(sdk string) ([]Package, error) {
	var pkgs []Package
	err := filepath.WalkDir(sdk, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_examples" {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "fastly.toml" {
			return nil
		}
		rel, err := filepath.Rel(sdk, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		kind := Unit
		switch {
		case strings.HasPrefix(rel, "integration_tests/"):
			kind = Integration
		case strings.HasPrefix(rel, "end_to_end_tests/"):
			kind = EndToEnd
		}
		pkgs = append(pkgs, Package{Dir: rel, Kind: kind})
		return nil
	})
	slices.SortFunc(pkgs, func(a, b Package) int {
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		return strings.Compare(a.Dir, b.Dir)
	})
	return pkgs, err
}

// Copy copies the SDK's tree from src (the read-only module cache) to dst,
// writable, and passes every fastly.toml through rewrite, which points its
// internet backends at a local stand-in. It returns the directories (as
// Package.Dir spells them) whose fastly.toml rewrite changed.
func Copy(src, dst string, rewrite func([]byte) ([]byte, error)) (rewritten map[string]bool, err error) {
	rewritten = map[string]bool{}
	return rewritten, filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if d.Name() == "fastly.toml" {
			changed, err := rewrite(data)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			if !bytes.Equal(changed, data) {
				rewritten[filepath.ToSlash(filepath.Dir(rel))] = true
			}
			data = changed
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// Runner runs packages of a writable SDK copy against the host.
type Runner struct {
	// SDK is the writable copy made by Copy.
	SDK string
	// Host is the fastlyhost binary.
	Host string
	// TinyGo is the command that runs TinyGo, with the Go it needs (make
	// passes tools/build-wasm run-tinygo); empty skips the TinyGo build.
	TinyGo []string
	// Timeout bounds one package's run under one build, builds included.
	Timeout time.Duration
	// ServeAddr is where end-to-end services listen: the address their
	// fastly.toml's backends name.
	ServeAddr string
	// Env is added to every command's environment (GOFLAGS, GOCACHE...).
	Env []string

	targetOnce sync.Once
	targetPath string
}

// Result is one package's run under one build.
type Result struct {
	Package Package
	Build   Build
	Outcome
	// Output is everything the run printed, for the log.
	Output string
	Took   time.Duration
	// FirstRun is the failed first run of a package whose expectation
	// names a race, when it was run again.
	FirstRun *Outcome
}

// Run runs p under build b.
func (r *Runner) Run(ctx context.Context, p Package, b Build) (res Result) {
	start := time.Now()
	res = Result{Package: p, Build: b}
	if b == TinyGo && len(r.TinyGo) == 0 {
		res.Outcome = Outcome{Status: Skipped, Detail: "TinyGo is not installed"}
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	// The service's log has its own buffer: it writes while the test does.
	var out, served lockedBuffer
	if p.Kind == EndToEnd {
		stop, err := r.serve(ctx, p, b, &served)
		if err != nil {
			res.Outcome = Outcome{Status: Fail, Detail: "serving the package's service: " + err.Error()}
			res.Output, res.Took = served.String(), time.Since(start)
			return res
		}
		defer func() {
			stop()
			res.Output += "---- the served service's build and log:\n" + served.String()
		}()
	}
	err := r.command(ctx, r.testCommand(p, b), r.SDK, &out).Run()
	res.Output, res.Took = out.String(), time.Since(start)
	res.Outcome = Parse(res.Output, err == nil)
	if ctx.Err() != nil {
		res.Status, res.Detail = Fail, fmt.Sprintf("no result within %v: %s", r.Timeout, res.Detail)
	}
	return res
}

// testCommand is the SDK Makefile's test command for p under b, with
// fastlyhost in Viceroy's place.
func (r *Runner) testCommand(p Package, b Build) []string {
	tags := "fastlyinternaldebug"
	if p.Kind == Unit {
		tags += ",nofastlyhostcalls"
	}
	if b == TinyGo {
		return append(slices.Clip(r.TinyGo), "test", "-v", "-target="+r.target(), "-tags="+tags, "./"+p.Dir)
	}
	return []string{"go", "test", "-v", "-count=1", "-tags=" + tags,
		"-exec", r.Host + " run -C fastly.toml", "./" + p.Dir}
}

// target writes, once, the TinyGo target the SDK's
// targets/fastly-compute-wasip1.json describes, with fastlyhost as the
// emulator, and returns its path.
func (r *Runner) target() string {
	r.targetOnce.Do(func() {
		r.targetPath = filepath.Join(r.SDK, "targets", "fastlyhost-wasip1.json")
		spec := fmt.Sprintf(`{"inherits": ["wasip1"], "emulator": %q}`+"\n", r.Host+" run -C fastly.toml {}")
		// An error here shows as tinygo's own, naming the file.
		_ = os.WriteFile(r.targetPath, []byte(spec), 0o644)
	})
	return r.targetPath
}

// command makes a command that writes to out, runs in dir, builds for
// wasip1, and dies with its children when ctx ends.
func (r *Runner) command(ctx context.Context, argv []string, dir string, out io.Writer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = os.Environ()
	if argv[0] == "go" {
		cmd.Env = append(cmd.Env, "GOOS=wasip1", "GOARCH=wasm")
	}
	cmd.Env = append(cmd.Env, r.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// serve builds p's service under b and serves it with fastlyhost at
// ServeAddr, as serve.sh does with `fastly compute serve`: Go runs the
// build script of the package's fastly.toml, as the CLI would; TinyGo
// builds the same package for wasip1. It returns once the address
// accepts connections.
func (r *Runner) serve(ctx context.Context, p Package, b Build, out io.Writer) (stop func(), err error) {
	dir := filepath.Join(r.SDK, filepath.FromSlash(p.Dir))
	wasm := filepath.Join("bin", "main.wasm")
	build := append(slices.Clip(r.TinyGo), "build", "-target=wasip1", "-tags=fastlyinternaldebug", "-o", wasm, ".")
	if b == Go {
		script, err := buildScript(filepath.Join(dir, "fastly.toml"))
		if err != nil {
			return nil, err
		}
		build = []string{"sh", "-c", script}
	}
	// TinyGo does not make the output's directory, as go build does.
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "conformance: building the service: %s\n", strings.Join(build, " "))
	if err := r.command(ctx, build, dir, out).Run(); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	srv := r.command(ctx, []string{r.Host, "-C", "fastly.toml", "--addr", r.ServeAddr, wasm}, dir, out)
	if err := srv.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	stop = func() {
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	for {
		conn, err := net.DialTimeout("tcp", r.ServeAddr, time.Second)
		if err == nil {
			conn.Close()
			return stop, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("fastlyhost exited before listening: %v", err)
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lockedBuffer is a buffer two processes' output copiers may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// buildScript reads [scripts] build from a fastly.toml.
func buildScript(manifest string) (string, error) {
	var m struct {
		Scripts struct {
			Build string `toml:"build"`
		} `toml:"scripts"`
	}
	if _, err := toml.DecodeFile(manifest, &m); err != nil {
		return "", err
	}
	if m.Scripts.Build == "" {
		return "", errors.New(manifest + " has no [scripts] build")
	}
	return m.Scripts.Build, nil
}
