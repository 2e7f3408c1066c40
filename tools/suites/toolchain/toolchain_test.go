// Package toolchain tests tools/build-wasm, the script that chooses the
// compiler for `make build` and `fastly compute build`: TinyGo when a usable
// one is installed (with the Go it needs), Go otherwise, and why.
package toolchain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBin writes a `tinygo` that reports version (none when empty) and
// whose build records GOTOOLCHAIN or fails, and a `go` whose build writes
// a marker, so the test runs no compiler.
func fakeBin(t *testing.T, version string, buildFails bool) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, script string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/usr/bin/env bash\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// out is the argument after -o.
	const out = `out=; prev=; for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done`
	write("go", out+"\n"+`[ "$1" = build ] && echo "go GOOS=$GOOS" > "$out"`+"\n")
	if version != "" {
		fail := ""
		if buildFails {
			fail = `[ "$1" = build ] && { echo "error: broken" >&2; exit 1; }`
		}
		write("tinygo", out+"\n"+fail+"\n"+`case "$1" in
version) echo "tinygo version `+version+` linux/amd64 (using go version go1.23.12 and LLVM version 15.0.6)";;
build) echo "tinygo GOTOOLCHAIN=${GOTOOLCHAIN:-}" > "$out";;
esac
`)
	}
	return dir
}

func TestBuildWasm(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "build-wasm"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, mode, tinygo string
		buildFails         bool
		env                []string
		wantExit           int
		wantOut, wantSay   string // the wasm's marker; a line on stderr
	}{
		{"no TinyGo: Go", "auto", "", false, nil, 0, "go GOOS=wasip1", "TinyGo is not installed: building with Go instead"},
		{"TinyGo too old: Go", "auto", "0.30.0", false, nil, 0, "go GOOS=wasip1", "TinyGo 0.30.0 is older than 0.33.0"},
		{"TinyGo broken: Go", "auto", "0.33.0", true, nil, 0, "go GOOS=wasip1", "the TinyGo 0.33.0 build failed (above): building with Go instead"},
		{"TinyGo 0.33 gets Go 1.23", "auto", "0.33.0", false, nil, 0, "tinygo GOTOOLCHAIN=go1.23.12", ""},
		{"TinyGo 0.37 gets the Go on PATH", "auto", "0.37.0", false, nil, 0, "tinygo GOTOOLCHAIN=", ""},
		{"an explicit GOTOOLCHAIN is kept", "auto", "0.33.0", false, []string{"GOTOOLCHAIN=go1.23.4"}, 0, "tinygo GOTOOLCHAIN=go1.23.4", ""},
		{"tinygo forced, too old: fails", "tinygo", "0.30.0", false, nil, 1, "", "TinyGo 0.30.0 is older than 0.33.0"},
		{"tinygo forced, none: fails", "tinygo", "", false, nil, 1, "", "TinyGo is not installed"},
		{"tinygo forced, broken: fails", "tinygo", "0.33.0", true, nil, 1, "", "error: broken"},
		{"go forced", "go", "0.33.0", false, nil, 0, "go GOOS=wasip1", ""},
		{"unknown mode", "rust", "", false, nil, 2, "", "unknown mode 'rust'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := fakeBin(t, tc.tinygo, tc.buildFails)
			out := filepath.Join(t.TempDir(), "main.wasm")
			cmd := exec.Command(script, tc.mode, out)
			cmd.Env = append(baseEnv(), "PATH="+bin+":/usr/bin:/bin", "TINYGO=tinygo")
			cmd.Env = append(cmd.Env, tc.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			exit := 0
			if ee, ok := err.(*exec.ExitError); ok {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if exit != tc.wantExit {
				t.Fatalf("exit %d, want %d; stderr:\n%s", exit, tc.wantExit, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantSay) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantSay, stderr.String())
			}
			got, _ := os.ReadFile(out)
			if strings.TrimSpace(string(got)) != tc.wantOut {
				t.Errorf("built %q, want %q", strings.TrimSpace(string(got)), tc.wantOut)
			}
		})
	}
}

func TestCheckTinyGo(t *testing.T) {
	script, _ := filepath.Abs(filepath.Join("..", "..", "build-wasm"))
	for _, tc := range []struct {
		version string
		ok      bool
		say     string
	}{{"0.33.0", true, ""}, {"0.32.0", false, "older than 0.33.0"}, {"", false, "not installed"}} {
		cmd := exec.Command(script, "check-tinygo")
		cmd.Env = append(baseEnv(), "PATH="+fakeBin(t, tc.version, false)+":/usr/bin:/bin", "TINYGO=tinygo")
		out, err := cmd.CombinedOutput()
		if (err == nil) != tc.ok || !strings.Contains(string(out), tc.say) {
			t.Errorf("TinyGo %q: %v %q, want ok=%v and %q", tc.version, err, out, tc.ok, tc.say)
		}
	}
}

// baseEnv is this environment without what each case sets.
func baseEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOTOOLCHAIN=") && !strings.HasPrefix(e, "PATH=") && !strings.HasPrefix(e, "TINYGO=") {
			env = append(env, e)
		}
	}
	return env
}
