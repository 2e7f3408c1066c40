package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCompiledBefore: serve announces a compile only for a module no
// earlier start compiled into the cache.
func TestCompiledBefore(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "main.wasm")
	if err := os.WriteFile(wasm, []byte("\x00asm one"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cache  string
		wasm   string
		module string // written to wasm first, "" keeps it
		mark   bool   // write the marker after the check, as a start does
		want   bool
	}{
		{"no cache directory", "", wasm, "", false, false},
		{"no module", cache, filepath.Join(dir, "none.wasm"), "", false, false},
		{"first start", cache, wasm, "", true, false},
		{"second start", cache, wasm, "", false, true},
		{"rebuilt module", cache, wasm, "\x00asm two", true, false},
		{"after the rebuild", cache, wasm, "", false, true},
	}
	for _, tc := range tests {
		if tc.module != "" {
			if err := os.WriteFile(tc.wasm, []byte(tc.module), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		marker, cached := compiledBefore(tc.cache, tc.wasm)
		if cached != tc.want {
			t.Errorf("%s: compiled before %v, want %v", tc.name, cached, tc.want)
		}
		if tc.mark {
			if err := os.WriteFile(marker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
