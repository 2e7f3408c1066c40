// Command fastlyhost runs a Fastly Compute wasm locally. It reads Viceroy's
// command line, so `fastly compute serve --viceroy-path` can run it where
// Viceroy cannot be installed:
//
//	fastlyhost -v -C fastly.toml --addr 127.0.0.1:7676 bin/main.wasm
//
// and Viceroy's run subcommand, which runs a module once as a WASI command
// with the Fastly calls available and passes its arguments and exit code
// through; it is what the SDK's tests use as `go test -exec`:
//
//	fastlyhost run -C fastly.toml test.wasm -test.v
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// version is what `--version` prints; the Fastly CLI reads a Viceroy
// version from it.
const version = "viceroy 0.14.4 (fastlyhost: the waiting room's local Compute host)"

func main() {
	o, err := parseArgs(os.Args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		return
	case err != nil:
		// Viceroy (clap) exits with 2 on a command line it refuses.
		fmt.Fprintf(os.Stderr, "fastlyhost: %v\n", err)
		os.Exit(2)
	case o.version:
		fmt.Println(version)
		return
	}
	if o.run {
		os.Exit(runOnce(o))
	}
	if err := serve(o); err != nil {
		log.Fatalf("fastlyhost: %v", err)
	}
}

// options are what the command line asks for.
type options struct {
	manifest, addr, wasm, cacheDir string
	pop                            string
	timeout                        time.Duration
	verbosity                      int
	version                        bool
	// run is Viceroy's run subcommand; args go to the module.
	run  bool
	args []string
}

// count is a flag that counts its repetitions, as Viceroy's -v does.
type count int

func (c *count) String() string   { return strconv.Itoa(int(*c)) }
func (c *count) Set(string) error { *c++; return nil }
func (c *count) IsBoolFlag() bool { return true }

// refused are Viceroy's flags (cli/src/opts.rs in fastly/Viceroy) and the
// flags the Fastly CLI passes (pkg/commands/compute/serve.go in fastly/cli)
// that this host does not implement. Each is refused with the reason,
// rather than ignored, so nobody waits for profiles or logs that never
// come.
var refused = map[string]string{
	"debug": "--debug is not supported: `fastly compute serve --debug` passes it for a Debug Adapter mode " +
		"that Viceroy does not have either (it refuses the flag); run without --debug",
	"profile-guest": "--profile-guest is not a Viceroy flag (Viceroy 0.9 replaced it with --profile=guest, " +
		"which `fastly compute serve --profile-guest` passes), and guest profiling is not supported by this host",
	"log-stdout":               "--log-stdout is not supported by this host: the guest's stdout goes to its log, line by line",
	"log-stderr":               "--log-stderr is not supported by this host: the guest's stderr goes to its log, line by line",
	"local-pushpin-proxy-port": "--local-pushpin-proxy-port is not supported by this host: it has no Pushpin handoff",
	"experimental_modules":     "--experimental_modules is not supported by this host: it links no experimental WASI modules",
	"unknown-import-behavior": "--unknown-import-behavior is not supported by this host: a Fastly call it does not implement " +
		"answers Unsupported, and any other unknown import fails at link time",
	"adapt":           "--adapt is not supported by this host: it runs core wasm modules, not components",
	"wasm-exceptions": "--wasm-exceptions is not supported by this host",
	"wasm-gc":         "--wasm-gc is not supported by this host",
	"wasm-cm-gc":      "--wasm-cm-gc is not supported by this host",
}

// parseArgs reads the command line as Viceroy's clap parser does: an
// optional serve subcommand, and flags before or after the wasm path (the
// Fastly CLI puts --debug and --profile after it, where Go's flag package
// would stop and silently drop them).
func parseArgs(args []string) (options, error) {
	o := options{}
	fs := flag.NewFlagSet("fastlyhost", flag.ContinueOnError)
	fs.StringVar(&o.manifest, "C", "fastly.toml", "fastly.toml to read [local_server] from")
	fs.StringVar(&o.manifest, "config", "fastly.toml", "the long form of -C")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:7676", "address to serve on")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.BoolVar(&o.version, "V", false, "the short form of --version")
	fs.Var((*count)(&o.verbosity), "v", "Viceroy's verbosity (-v, -vv, -vvv); accepted, and changes nothing: the host's log has no levels")
	fs.StringVar(&o.cacheDir, "cache-dir", defaultCacheDir(), "directory for compiled code (empty: none)")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "how long one request's instance may run")
	fs.StringVar(&o.pop, "pop", "", "the POP this host plays (FASTLY_POP), with its own cache; default Viceroy's XXX")

	if len(args) > 0 {
		switch args[0] {
		case "serve":
			args = args[1:]
		case "run":
			o.run = true
			args = args[1:]
		case "adapt":
			return o, fmt.Errorf("the adapt subcommand is not supported by this host: it runs core wasm modules, not components")
		}
	}
	if o.run {
		// Everything after the module is the module's (clap's
		// trailing_var_arg with allow_hyphen_values), even -v or -C.
		flags, rest := splitAtModule(args)
		args = flags
		o.manifest = ""
		if len(rest) > 0 {
			args = append(flags, rest[0])
		}
		if len(rest) > 1 {
			o.args = rest[1:]
		}
	}
	expanded, err := viceroyFlags(args)
	if err != nil {
		return o, err
	}
	var positional []string
	args = expanded
	for {
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch len(positional) {
	case 0:
		o.wasm = filepath.Join("bin", "main.wasm")
	case 1:
		o.wasm = positional[0]
	default:
		return o, fmt.Errorf("unexpected argument '%s': give one wasm module", positional[1])
	}
	return o, nil
}

// valueFlags are the flags that take their value as the next argument.
var valueFlags = map[string]bool{"C": true, "config": true, "addr": true, "cache-dir": true, "timeout": true, "pop": true, "profile": true}

// splitAtModule splits a run command line into the flags before the module
// and the module with its arguments.
func splitAtModule(args []string) (flags, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args[:i], args[i+1:]
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return args[:i], args[i:]
		}
		if name := strings.TrimLeft(a, "-"); valueFlags[name] {
			i++
		}
	}
	return args, nil
}

// viceroyFlags refuses the flags this host does not implement and spells
// -vv and -vvv as repeated -v, which Go's flag package then counts as
// clap's ArgAction::Count does.
func viceroyFlags(args []string) ([]string, error) {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
			continue
		}
		if strings.Trim(a, "v") == "-" {
			for range len(a) - 1 {
				out = append(out, "-v")
			}
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "profile" {
			if !hasValue && i+1 < len(args) {
				value = args[i+1]
			}
			return nil, checkProfile(value)
		}
		if reason := refused[name]; reason != "" {
			return nil, errors.New(reason)
		}
		out = append(out, a)
	}
	return out, nil
}

// checkProfile refuses --profile: a value Viceroy would refuse, in its
// words, and a value it accepts (check_wasmtime_profiler_mode: perfmap,
// jitdump, vtune, or guest[,path[,sample]]) because this host cannot
// profile.
func checkProfile(value string) error {
	parts := strings.Split(value, ",")
	valid := false
	switch parts[0] {
	case "perfmap", "jitdump", "vtune":
		valid = len(parts) == 1
	case "guest":
		valid = len(parts) <= 2 || len(parts) == 3 && validSamplePeriod(parts[2])
	}
	if !valid {
		return fmt.Errorf("invalid value '%s' for '--profile <STRATEGY>': valid options are perfmap, jitdump, vtune, guest[,path[,sample]]", value)
	}
	return fmt.Errorf("--profile=%s is not supported: this host cannot profile the guest "+
		"(Viceroy writes per-request profiles for https://profiler.firefox.com/, which `fastly compute serve --profile-guest` asks for); run without it", value)
}

// validSamplePeriod reports whether Viceroy's parse_profile_sample_duration
// reads s: a whole number with no unit (seconds) or with s, ms, us, μs or ns.
func validSamplePeriod(s string) bool {
	for _, unit := range []string{"", "s", "ms", "us", "μs", "ns"} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			if _, err := strconv.ParseUint(n, 10, 64); err == nil {
				return true
			}
		}
	}
	return false
}

func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "waitingroom-fastlyhost")
}

// runOnce runs the module as `viceroy run` does and returns the exit code
// for the process. Without -C, the module runs with no local_server
// configuration, as under Viceroy.
func runOnce(o options) int {
	m := &fastlyhost.Manifest{}
	if o.manifest != "" {
		var err error
		if m, err = fastlyhost.LoadManifest(o.manifest); err != nil {
			log.Printf("fastlyhost: %v", err)
			return 1
		}
	}
	wasm, err := os.ReadFile(o.wasm)
	if err != nil {
		log.Printf("fastlyhost: %v", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	host, err := fastlyhost.New(ctx, wasm, m, fastlyhost.Options{CacheDir: o.cacheDir, POP: o.pop})
	if err != nil {
		log.Printf("fastlyhost: %v", err)
		return 1
	}
	defer host.Close(context.Background())
	program := strings.TrimSuffix(filepath.Base(o.wasm), filepath.Ext(o.wasm))
	code, err := host.Run(ctx, program, o.args, os.Stdout, os.Stderr)
	if err != nil {
		log.Printf("fastlyhost: %v", err)
	}
	return code
}

// serve answers HTTP on o.addr until interrupted.
func serve(o options) error {
	m, err := fastlyhost.LoadManifest(o.manifest)
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(o.wasm)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	host, err := fastlyhost.New(ctx, wasm, m, fastlyhost.Options{CacheDir: o.cacheDir, Timeout: o.timeout, POP: o.pop})
	if err != nil {
		return err
	}
	defer host.Close(context.Background())
	bound, stubbed := host.Imports()
	log.Printf("fastlyhost: %s compiled in %v; %d Fastly calls bound, %d answered Unsupported",
		o.wasm, time.Since(start).Round(time.Millisecond), len(bound), len(stubbed))
	srv := &http.Server{Addr: o.addr, Handler: host, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Printf("Listening on http://%s", o.addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Print("fastlyhost: stopped")
	return nil
}
