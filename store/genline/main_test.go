// The generator runs under Go (go generate); the TinyGo leg, which runs the
// edge module's tests in a host without the repository's files, leaves it out.

//go:build !tinygo

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGeneratedIsCurrent: line.lua is its parts assembled, and
// lineproto.go the Go side of that script; an edit to line.lua, to a part
// or to the protocol table without go generate fails.
func TestGeneratedIsCurrent(t *testing.T) {
	files, err := generate("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		path := filepath.Join("..", f.name)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.data) {
			t.Errorf("%s differs from what store/lua and the protocol table make: run go generate ./store", path)
		}
	}
}

// TestPartsAreInTheOrder: every file of store/lua is a part of the
// script, in genline's order once, so that none is left out of it.
func TestPartsAreInTheOrder(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("..", "lua", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, n := range names {
		files = append(files, filepath.Base(n))
	}
	var parts []string
	for _, name := range order {
		if name != protocol {
			parts = append(parts, name)
		}
	}
	slices.Sort(files)
	slices.Sort(parts)
	if !slices.Equal(files, parts) {
		t.Fatalf("store/lua holds %q, genline's order %q", files, parts)
	}
}

// TestPartsReadAtOnce: every part is at most maxPart lines and starts
// with its header; and checkPart refuses a part that is not so.
func TestPartsReadAtOnce(t *testing.T) {
	for _, name := range order {
		if name == protocol {
			continue
		}
		src, err := os.ReadFile(filepath.Join("..", "lua", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := checkPart(name, string(src)); err != nil {
			t.Error(err)
		}
	}
	const head = "-- x.lua: a part.\n-- KEYS: line.\n-- ARGV: now.\n-- Reply: none set here.\n"
	for _, c := range []struct {
		name, src, want string // want: what the error names; "" for none
	}{
		{"fine", head + "local x = 1\n", ""},
		{"longest", head + strings.Repeat("x = 1\n", maxPart-4), ""},
		{"too long", head + strings.Repeat("x = 1\n", maxPart-3), "lines"},
		{"no header", "local x = 1\n", "first line"},
		{"another part's name", strings.Replace(head, "x.lua", "y.lua", 1), "first line"},
		{"no keys", strings.Replace(head, "-- KEYS: line.\n", "", 1), "KEYS"},
		{"arguments below the code", strings.Replace(head, "-- ARGV: now.\n", "", 1) + "x = 1\n-- ARGV: now.\n", "ARGV"},
		{"no reply", strings.Replace(head, "-- Reply:", "-- Answer:", 1), "Reply"},
		{"no last newline", head + "x = 1", "newline"},
	} {
		err := checkPart("x.lua", c.src)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want none", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}
