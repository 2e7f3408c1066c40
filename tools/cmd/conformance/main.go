// Command conformance runs the Fastly Go SDK's own test suites (from the
// module cache) against fastlyhost, under Go and TinyGo, and prints a line
// per package and build. `make conformance` runs it with -readme to
// regenerate the table in tools/fastlyhost/README.md; `make test` runs it
// with -check, which fails when a package's result differs from
// tools/conformance/expected.go.
//
//	conformance -host bin/fastlyhost [-tinygo "tools/build-wasm run-tinygo"] [-readme tools/fastlyhost/README.md] [-check] [-only dir,dir]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/edgequeue/waitingroom/tools/conformance"
	"github.com/edgequeue/waitingroom/tools/sdkbackend"
)

func main() {
	host := flag.String("host", "", "the fastlyhost binary (required)")
	tinygo := flag.String("tinygo", "", "the command that runs TinyGo with the Go it needs, e.g. \"tools/build-wasm run-tinygo\"; empty skips the TinyGo build")
	module := flag.String("module", "..", "the directory of the module that requires compute-sdk-go")
	readme := flag.String("readme", "", "write the table into this README between its markers")
	check := flag.Bool("check", false, "fail when a result differs from tools/conformance/expected.go")
	only := flag.String("only", "", "comma-separated package directories to run (default: all)")
	logPath := flag.String("log", filepath.Join(os.TempDir(), "conformance.log"), "write every run's output here")
	timeout := flag.Duration("timeout", 10*time.Minute, "bound on one package's run under one build")
	keep := flag.Bool("keep", false, "keep the scratch directory")
	parallel := flag.Int("parallel", 2, "runs at once (an end-to-end package runs alone)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("conformance: ")
	if *host == "" {
		log.Fatal("-host is required: the fastlyhost binary (make bin/fastlyhost)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *host, *tinygo, *module, *readme, *only, *logPath, *timeout, *parallel, *check, *keep); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, host, tinygo, module, readme, only, logPath string, timeout time.Duration, parallel int, check, keep bool) error {
	host, err := filepath.Abs(host)
	if err != nil {
		return err
	}
	sdk, version, err := sdkDir(module)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "conformance-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(scratch)
	}

	// The stand-in for the internet backends the SDK's tests name.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	standIn := "http://" + ln.Addr().String()
	go http.Serve(ln, sdkbackend.Handler())
	defer ln.Close()

	copyDir := filepath.Join(scratch, "compute-sdk-go")
	rewrite := func(data []byte) ([]byte, error) { return sdkbackend.RewriteManifest(data, standIn) }
	rewritten, err := conformance.Copy(sdk, copyDir, rewrite)
	if err != nil {
		return err
	}
	pkgs, err := conformance.Discover(copyDir)
	if err != nil {
		return err
	}
	for i := range pkgs {
		pkgs[i].StandIn = rewritten[pkgs[i].Dir]
	}
	if only != "" {
		want := strings.Split(only, ",")
		pkgs = slices.DeleteFunc(pkgs, func(p conformance.Package) bool { return !slices.Contains(want, p.Dir) })
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()

	r := &conformance.Runner{SDK: copyDir, Host: host, TinyGo: strings.Fields(tinygo), Timeout: timeout, ServeAddr: "127.0.0.1:23456",
		// Dynamic backends are named in the tests' code, not in a
		// manifest: the host is told where their stand-in is.
		Env: []string{sdkbackend.StandInEnv(standIn)}}
	log.Printf("compute-sdk-go %s from %s; stand-in backend at %s; %d packages", version, sdk, standIn, len(pkgs))
	type job struct {
		pkg   conformance.Package
		build conformance.Build
	}
	var jobs []job
	for _, p := range pkgs {
		for _, b := range []conformance.Build{conformance.Go, conformance.TinyGo} {
			jobs = append(jobs, job{p, b})
		}
	}
	results := make([]conformance.Result, len(jobs))
	var (
		wg    sync.WaitGroup
		logMu sync.Mutex // the log file and the lines printed
		// An end-to-end package runs alone: its services share
		// ServeAddr, and serve-many's known race is likelier on a busy
		// machine.
		alone sync.RWMutex
		next  = make(chan int)
	)
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				if j.pkg.Kind == conformance.EndToEnd {
					alone.Lock()
				} else {
					alone.RLock()
				}
				res := r.Run(ctx, j.pkg, j.build)
				if res.Status == conformance.Fail && conformance.Expected[j.pkg.Dir][j.build].Race != "" {
					first := res
					res = r.Run(ctx, j.pkg, j.build)
					res.FirstRun = &first.Outcome
					res.Output = first.Output + "\n---- run again (a known race):\n" + res.Output
				}
				if j.pkg.Kind == conformance.EndToEnd {
					alone.Unlock()
				} else {
					alone.RUnlock()
				}
				results[i] = res
				line := fmt.Sprintf("%-36s %-6s %-8s %3d passed %2d failed  %v", j.pkg.Dir, j.build, res.Status, res.Passed, res.Failed, res.Took.Round(100*time.Millisecond))
				if res.Status != conformance.Pass && res.Detail != "" {
					line += "  " + res.Detail
				}
				logMu.Lock()
				fmt.Fprintf(logFile, "==== %s (%s): %s in %v\n%s\n", j.pkg.Dir, j.build, res.Status, res.Took.Round(time.Millisecond), res.Output)
				log.Print(line)
				logMu.Unlock()
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	log.Printf("every run's output: %s", logPath)

	if readme != "" {
		text, err := os.ReadFile(readme)
		if err != nil {
			return err
		}
		table := conformance.Table(results, conformance.Expected, conformance.About)
		updated, err := conformance.Splice(string(text), table)
		if err != nil {
			return err
		}
		if err := os.WriteFile(readme, []byte(updated), 0o644); err != nil {
			return err
		}
		log.Printf("wrote the table into %s", readme)
	}
	if diffs := conformance.Check(results, conformance.Expected); check && len(diffs) > 0 {
		for _, d := range diffs {
			log.Print("DIFFERS: " + d)
		}
		return fmt.Errorf("%d results differ from tools/conformance/expected.go (outputs in %s)", len(diffs), logPath)
	}
	return nil
}

// sdkDir downloads compute-sdk-go at the version module requires (a no-op
// when the module cache has it) and returns its directory there.
func sdkDir(module string) (dir, version string, err error) {
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/fastly/compute-sdk-go")
	cmd.Dir = module
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("go mod download github.com/fastly/compute-sdk-go in %s: %w", module, err)
	}
	var m struct{ Dir, Version, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", "", err
	}
	if m.Error != "" || m.Dir == "" {
		return "", "", fmt.Errorf("go mod download github.com/fastly/compute-sdk-go: %s", m.Error)
	}
	return m.Dir, m.Version, nil
}
