// Command serve runs the waiting room locally in front of a demo origin:
// Redis, the Upstash REST stand-in, the origin, and bin/main.wasm in the
// local Compute host on http://127.0.0.1:7676; with -pops N, N hosts, each
// its own POP with its own cache, on 7676, 7677... Ctrl-C stops everything.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/tools/devstack"
)

func main() {
	manifest := flag.String("C", "fastly.toml", "fastly.toml to read [local_server] from")
	wasm := flag.String("wasm", "bin/main.wasm", "the service to run")
	addr := flag.String("addr", "127.0.0.1:7676", "where the waiting room listens")
	upstashAddr := flag.String("upstash-addr", "127.0.0.1:8079", "where the Upstash REST stand-in listens")
	originAddr := flag.String("origin-addr", "127.0.0.1:8080", "where the demo origin listens")
	embedded := flag.Bool("embedded-redis", false, "use the in-process Redis even when redis-server is installed")
	pops := flag.Int("pops", 1, "how many POPs to run: a host each, on -addr's port and the ones after it")
	flag.Parse()
	if *pops < 1 {
		log.Fatalf("serve: -pops %d: run at least one POP", *pops)
	}
	cache, _ := os.UserCacheDir()
	if cache != "" {
		cache = filepath.Join(cache, "waitingroom-fastlyhost")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	log.Printf("starting Redis, the Upstash REST stand-in, the demo origin and %d local host(s) for %s", *pops, *wasm)
	marker, cached := compiledBefore(cache, *wasm)
	if !cached {
		log.Printf("compiling %s for this machine (about a minute for the Go build on 2 busy cores)%s", *wasm, keptIn(cache))
	}
	st, err := devstack.Start(ctx, devstack.Options{
		Manifest: *manifest, Wasm: *wasm, Addr: *addr,
		UpstashAddr: *upstashAddr, OriginAddr: *originAddr,
		EmbeddedRedis: *embedded, CacheDir: cache, POPs: devstack.POPNames(*pops),
	})
	if err != nil {
		log.Fatalf("serve: %v", err)
	}
	if marker != "" && !cached {
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			log.Printf("serve: %v (the next start says it compiles again)", err)
		}
	}
	password := string(st.Manifest.SecretStores[devstack.SecretStore]["admin_password"])
	adminPath := st.Manifest.ConfigStores[devstack.ConfigStore]["admin_path"]
	if adminPath == "" {
		adminPath = "/_wr/admin"
	}
	apiPath := st.Manifest.ConfigStores[devstack.ConfigStore][edge.KeyAPIPath]
	if apiPath == "" {
		apiPath = edge.DefaultAPIPath
	}
	apiToken := string(st.Manifest.SecretStores[devstack.SecretStore][edge.SecretAPIToken])
	log.Printf("ready in %v", time.Since(start).Round(time.Millisecond))
	log.Printf("redis:          %s (%s)", st.RedisAddr, st.RedisKind)
	log.Printf("upstash (REST): %s", st.UpstashURL)
	log.Printf("demo origin:    %s", st.OriginURL)
	for _, pop := range st.POPs {
		log.Printf("waiting room:   %s/  (POP %s)", pop.URL, pop.Name)
	}
	log.Printf("admin panel:    %s%s  (any user name, password %q: development only)", st.HostURL, adminPath, password)
	log.Printf("admin API:      %s%s  (Authorization: Bearer %s: development only)", st.HostURL, apiPath, apiToken)
	log.Printf("press Ctrl-C to stop")
	<-ctx.Done()
	log.Printf("stopping")
	st.Close()
}

// compiledBefore reports whether an earlier start compiled this very wasm
// into the cache, so the wait is announced only when there is one: the
// host's compilation cache does not say, so each start that compiled
// leaves a marker named by the module's digest beside it. marker is where
// that start's marker goes ("" without a cache or a readable module).
func compiledBefore(cache, wasm string) (marker string, cached bool) {
	if cache == "" {
		return "", false
	}
	f, err := os.Open(wasm)
	if err != nil {
		return "", false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false
	}
	marker = filepath.Join(cache, "serve-compiled-"+hex.EncodeToString(h.Sum(nil)))
	_, err = os.Stat(marker)
	return marker, err == nil
}

// keptIn says where the compiled code is kept, if anywhere.
func keptIn(cache string) string {
	if cache == "" {
		return ", not kept: no cache directory"
	}
	return ", kept in " + cache + " for later starts"
}
