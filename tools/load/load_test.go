package load

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestLoad(t *testing.T) {
	wasm := os.Getenv("WASM")
	if wasm == "" {
		wasm = filepath.Join("..", "..", "bin", "main.wasm")
	}
	rep, err := Run(context.Background(), Options{Wasm: wasm, Manifest: filepath.Join("..", "..", "fastly.toml"),
		CacheDir: filepath.Join(os.TempDir(), "fastlyhost-test-cache"), Visitors: 400, Concurrency: 32})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Phases {
		t.Logf("%+v rps=%.1f cpu/req=%v", p, p.PerSecond(), p.CPUPerRequest())
	}
}
