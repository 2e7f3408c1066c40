// Package platform adapts Fastly Compute to the edge package's ports: the
// config, KV and secret stores, the origin and Upstash backends, Edge Rate
// Limiting, geolocation, ACLs, bot detection, real-time log endpoints, the
// POP's cache and the sandbox's reuse. It is the only package that calls
// the platform's host functions; the edge, admin and api packages use the
// SDK's fsthttp types only as the HTTP they speak.
package platform

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// The backends fastly.toml defines.
const (
	originBackend  = "origin"
	upstashBackend = "upstash"
)

// Serve serves requests until the sandbox ends, with one edge.Handler
// wired to the platform, built as the sandbox starts.
func Serve() {
	cfg, kv := &config{}, &kvTemplates{}
	h := &edge.Handler{
		Config:    cfg,
		Templates: kv,
		Secrets:   secrets{},
		Origin:    origin{},
		Upstash:   upstash{},
		// The databases beyond the first that carry the rooms' shards
		// (upstash_databases), each its own backend.
		UpstashDatabase: func(j int) store.Transport { return upstash{edge.UpstashBackendOf(j)} },
		Limits:          limits{},
		Geo:             geolocation{},
		ACLs:            acls{},
		Bots:            bots{},
		// The upstash backend knows the database's host, so the config
		// store need not repeat it.
		UpstashViaBackend: true,
		// Viceroy and the project's local host both say "localhost";
		// Fastly's POPs name the cache node.
		Local:        os.Getenv("FASTLY_HOSTNAME") == "localhost",
		Now:          time.Now,
		Logf:         log.Printf,
		LogEndpoints: openLogEndpoint,
		POP:          os.Getenv("FASTLY_POP"),
		Cache:        popCache{},
		// What the sandbox keeps between the requests it serves: nothing
		// about a visitor (edge.Kept).
		Kept: &edge.Kept{},
	}
	fsthttp.ServeMany(func(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		// A store's handle reads the store as it was when opened (in
		// Viceroy too), so each request opens the config and KV stores
		// afresh: a change reaches a reused sandbox at its next request.
		cfg.store, kv.store = nil, nil
		h.ServeHTTP(ctx, w, r)
	}, sandboxOptions())
}

// nextRequestWait is how long a sandbox waits for another request before it
// ends: long enough to catch a busy POP's next visitor, short enough that an
// idle sandbox goes.
const nextRequestWait = time.Second

// sandboxOptions reads the sandbox's limits from the config store, once,
// when the sandbox starts (edge.LoadSandboxLimits).
func sandboxOptions() *fsthttp.ServeManyOptions {
	limits, problems := edge.LoadSandboxLimits(&config{}, edge.DefaultSandboxLimits())
	for _, p := range problems {
		log.Printf("config: %v", p)
	}
	return &fsthttp.ServeManyOptions{NextTimeout: nextRequestWait, MaxRequests: limits.Requests, MaxLifetime: limits.Lifetime}
}
