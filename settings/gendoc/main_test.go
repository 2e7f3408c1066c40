// The generator runs under Go (go generate); the TinyGo leg, which runs the
// edge module's tests in a host without the repository's files, leaves it out.

//go:build !tinygo

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReferenceIsCurrent fails while the committed docs/configuration.md
// differs from what the table writes.
func TestReferenceIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := reference(); !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the settings table: run make docs (go generate ./settings)", path)
	}
}
