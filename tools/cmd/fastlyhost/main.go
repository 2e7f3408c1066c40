// Command fastlyhost runs a Fastly Compute wasm locally. It accepts
// Viceroy's command line, so `fastly compute serve --viceroy-path` can run
// it where Viceroy cannot be installed:
//
//	fastlyhost -C fastly.toml --addr 127.0.0.1:7676 bin/main.wasm
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
	"syscall"
	"time"

	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// version is what `--version` prints; the Fastly CLI reads a Viceroy
// version from it.
const version = "viceroy 0.14.4 (fastlyhost: the waiting room's local Compute host)"

func main() {
	manifest := flag.String("C", "fastly.toml", "fastly.toml to read [local_server] from")
	addr := flag.String("addr", "127.0.0.1:7676", "address to serve on")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Bool("V", false, "print the version and exit (short form)")
	flag.Bool("v", false, "verbose (accepted for Viceroy compatibility)")
	cacheDir := flag.String("cache-dir", defaultCacheDir(), "directory for compiled code (empty: none)")
	timeout := flag.Duration("timeout", 60*time.Second, "how long one request's instance may run")
	flag.Parse()
	if *showVersion || flag.Lookup("V").Value.String() == "true" {
		fmt.Println(version)
		return
	}
	wasmPath := "bin/main.wasm"
	if flag.NArg() > 0 {
		wasmPath = flag.Arg(0)
	}
	if err := run(*manifest, *addr, wasmPath, *cacheDir, *timeout); err != nil {
		log.Fatalf("fastlyhost: %v", err)
	}
}

func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "waitingroom-fastlyhost")
}

func run(manifestPath, addr, wasmPath, cacheDir string, timeout time.Duration) error {
	m, err := fastlyhost.LoadManifest(manifestPath)
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	host, err := fastlyhost.New(ctx, wasm, m, fastlyhost.Options{CacheDir: cacheDir, Timeout: timeout})
	if err != nil {
		return err
	}
	defer host.Close(context.Background())
	bound, stubbed := host.Imports()
	log.Printf("fastlyhost: %s compiled in %v; %d Fastly calls bound, %d answered Unsupported",
		wasmPath, time.Since(start).Round(time.Millisecond), len(bound), len(stubbed))
	srv := &http.Server{Addr: addr, Handler: host, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Printf("Listening on http://%s", addr)
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
