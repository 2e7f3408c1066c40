package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// repoRoot is the project's directory, seen from this package.
var repoRoot = filepath.Join("..", "..", "..")

// packageName is what the CLI names the package after: fastly.toml's name.
const packageName = "edge-waiting-room"

// fastlyCLI returns the path of the Fastly CLI binary.
func fastlyCLI(t *testing.T) string {
	t.Helper()
	cli, err := filepath.Abs(filepath.Join("..", "..", "fastlycli", "node_modules", "@fastly", "cli-linux-x64", "fastly"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("the Fastly CLI is not installed: run `npm ci` in tools/fastlycli (make test does): %v", err)
	}
	return cli
}

// cliEnv is the environment the CLI runs in: its own home (it writes its
// config file there), no API token, the Go caches of this machine (so the
// build script is not a cold build), and a stub wasm-tools first on PATH:
// `fastly compute build` otherwise tries to download wasm-tools from
// GitHub, and only annotates the wasm with it.
func cliEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	stub := filepath.Join(home, "stubs")
	if err := os.MkdirAll(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stub, "wasm-tools"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"PATH=" + stub + string(os.PathListSeparator) + os.Getenv("PATH"),
		// A project copy may sit beside a stand-in .git that Go cannot read.
		"GOFLAGS=-buildvcs=false"}
	// TinyGo keeps its cache under the user's cache directory.
	if dir, err := os.UserCacheDir(); err == nil {
		env = append(env, "XDG_CACHE_HOME="+dir)
	}
	// GOENV keeps the settings of `go env -w` (GOPROXY and the like) that
	// live under the real home; the caches follow it by default, so they
	// are passed too. GOTOOLCHAIN is not set here: tools/build-wasm picks
	// the Go an old TinyGo needs unless the user has set one.
	for _, v := range []string{"GOENV", "GOMODCACHE", "GOCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "HOME" || name == "XDG_CONFIG_HOME" || name == "XDG_CACHE_HOME" || name == "PATH" || name == "GOFLAGS" || strings.HasPrefix(name, "FASTLY_"):
		case name == "GOENV" || name == "GOMODCACHE" || name == "GOCACHE" || name == "GOPATH":
		default:
			env = append(env, kv)
		}
	}
	return env
}

// runCLI runs the Fastly CLI in dir and returns its output.
func runCLI(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(fastlyCLI(t), args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// projectCopy copies the project as a clone has it (the files git tracks,
// as they are in the working tree) into a temporary directory, so CLI
// commands that write pkg/, bin/ or fastly.toml leave the repository alone.
func projectCopy(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		src := filepath.Join(repoRoot, f)
		info, err := os.Stat(src)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, f), b)
		// Scripts such as tools/build-wasm stay executable.
		if err := os.Chmod(filepath.Join(dst, f), info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// packageFiles lists a package's regular files by their path inside the
// package's top folder, with their contents.
func packageFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		top, rest, ok := strings.Cut(h.Name, "/")
		if !ok || top != packageName {
			t.Fatalf("package entry %q is not under %s/", h.Name, packageName)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[rest] = b
	}
}

var wasmMagic = []byte("\x00asm")

// TestFastlyCLIBuildAndValidate runs what `fastly compute publish` runs
// before it talks to Fastly, `fastly compute build` (the [scripts] build,
// with --include-source so that .fastlyignore is exercised), then
// `fastly compute validate` on the package, in a copy of the project with
// the folders a working clone has (tools/ with its npm packages, .git,
// pkg/, bin/) that the source package must leave out.
func TestFastlyCLIBuildAndValidate(t *testing.T) {
	dir := projectCopy(t)
	// What a working clone has besides its sources, none of which belongs
	// in the source package (tools/ is the separate tools module; its
	// npm packages alone are 30 MB).
	decoys := []string{
		"tools/fastlycli/node_modules/@fastly/cli-linux-x64/fastly", "tools/.cache/wazero/a/b/c",
		".git/objects/ab/cdef", ".git/HEAD", "pkg/package/bin/main.wasm", "bin/serve", "bin/bench/started",
	}
	for _, d := range decoys {
		writeFile(t, filepath.Join(dir, d), []byte("decoy\n"))
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "fastly.toml"))
	if err != nil {
		t.Fatal(err)
	}
	env := cliEnv(t)
	out, err := runCLI(t, dir, env, "compute", "build", "--non-interactive", "--include-source")
	if err != nil || !strings.Contains(out, "Built package (pkg/"+packageName+".tar.gz)") {
		t.Fatalf("fastly compute build: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "fastly.toml")); !bytes.Equal(after, manifest) {
		t.Fatalf("fastly compute build changed fastly.toml")
	}
	pkg := filepath.Join(dir, "pkg", packageName+".tar.gz")
	files := packageFiles(t, pkg)
	built, err := os.ReadFile(filepath.Join(dir, "bin", "main.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(built, wasmMagic) || !bytes.Equal(files["bin/main.wasm"], built) {
		t.Fatalf("the package's bin/main.wasm (%d bytes) is not the build's (%d bytes)", len(files["bin/main.wasm"]), len(built))
	}
	// The edge module, and what its build script runs.
	for _, want := range []string{"fastly.toml", "go.mod", "go.sum", "main.go", "Makefile", "tools/build-wasm", "tools/tinygo-wasip1.json",
		"edge/handler.go", "queue/gate.go", "store/line.lua", "templates/queue.html"} {
		if _, ok := files[want]; !ok {
			t.Errorf("the source package lacks %s", want)
		}
	}
	for name := range files {
		if name != "tools/build-wasm" && name != "tools/tinygo-wasip1.json" && (strings.HasPrefix(name, "tools/") || strings.HasPrefix(name, ".git/") ||
			strings.HasPrefix(name, "pkg/") || (strings.HasPrefix(name, "bin/") && name != "bin/main.wasm")) {
			t.Errorf("the source package holds %s, which .fastlyignore leaves out", name)
		}
	}
	out, err = runCLI(t, dir, env, "compute", "validate", "-p", pkg)
	if err != nil || !strings.Contains(out, "Validated package") {
		t.Fatalf("fastly compute validate: %v\n%s", err, out)
	}
	// fastly compute publish deletes bin/main.wasm before the build script
	// runs: a build of unchanged sources is copied from bin/cache, and says
	// so, instead of compiling again for minutes in silence.
	out, err = runCLI(t, dir, env, "compute", "build", "--non-interactive", "--verbose")
	if again, _ := os.ReadFile(filepath.Join(dir, "bin", "main.wasm")); err != nil || !bytes.Equal(again, built) ||
		!strings.Contains(out, "the sources are unchanged since the") {
		t.Fatalf("fastly compute build of unchanged sources: %v, the same wasm %v\n%s", err, bytes.Equal(again, built), out)
	}
}

// TestFastlyCLIPackAndValidate packs the wasm under test ($WASM, from Go or
// TinyGo) with the project's fastly.toml, as `fastly compute pack` does for
// a wasm built elsewhere, and validates the package.
func TestFastlyCLIPackAndValidate(t *testing.T) {
	wasm, err := filepath.Abs(wasmPath())
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatalf("%v (run make build, or set WASM)", err)
	}
	dir := t.TempDir()
	manifest, err := os.ReadFile(filepath.Join(repoRoot, "fastly.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "fastly.toml"), manifest)
	env := cliEnv(t)
	out, err := runCLI(t, dir, env, "compute", "pack", "--wasm-binary", wasm)
	if err != nil {
		t.Fatalf("fastly compute pack: %v\n%s", err, out)
	}
	pkg := filepath.Join(dir, "pkg", packageName+".tar.gz")
	files := packageFiles(t, pkg)
	if !bytes.Equal(files["bin/main.wasm"], want) || !bytes.Equal(files["fastly.toml"], manifest) {
		t.Fatalf("the package holds %d bytes of wasm (want %d) and fastly.toml equal: %v",
			len(files["bin/main.wasm"]), len(want), bytes.Equal(files["fastly.toml"], manifest))
	}
	out, err = runCLI(t, dir, env, "compute", "validate", "-p", pkg)
	if err != nil || !strings.Contains(out, "Validated package") {
		t.Fatalf("fastly compute validate: %v\n%s", err, out)
	}
}

// TestFastlyCLIRewritesManifest shows, with the CLI's own code, what the
// first `fastly compute publish` does to fastly.toml when it records the new
// service's id (UpdateManifestServiceID: manifest.File.Read, then Write).
// Publish cannot run here (it asks accounts.fastly.com for its login
// metadata before anything else), but every command rewrites the manifest
// the same way when manifest_version is missing, offline. The rewrite must
// keep every [setup] key (the CLI's parser drops keys it does not know, so
// a key that survives is one it read) and every [local_server] setting the
// local host reads (so `make serve` still has the Germany sale's countries
// and the office ACL after a publish: the CLI's schema has neither table,
// so they live in fastly.local.toml, which the CLI leaves alone); the
// comments are lost, which is why fastly.toml's guidance is in [setup]
// descriptions.
func TestFastlyCLIRewritesManifest(t *testing.T) {
	dir := projectCopy(t)
	original, err := os.ReadFile(filepath.Join(dir, "fastly.toml"))
	if err != nil {
		t.Fatal(err)
	}
	local, err := os.ReadFile(filepath.Join(dir, fastlyhost.LocalManifest))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(original), "\n") {
		if !strings.HasPrefix(line, "manifest_version") {
			kept = append(kept, line)
		}
	}
	path := filepath.Join(dir, "fastly.toml")
	writeFile(t, path, []byte(strings.Join(kept, "\n")))
	writeFile(t, filepath.Join(dir, "original.toml"), original)
	if out, err := runCLI(t, dir, cliEnv(t), "version"); err != nil || !strings.Contains(out, "manifest_version") {
		t.Fatalf("fastly version: %v\n%s", err, out)
	}
	rewritten, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rewritten), "service_id = \"\"") || !strings.Contains(string(rewritten), "manifest_version = 3") {
		t.Fatalf("the CLI did not rewrite fastly.toml:\n%s", rewritten)
	}
	var comments []string
	for _, line := range strings.Split(string(rewritten), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			comments = append(comments, line)
		}
	}
	if len(comments) != 2 || !strings.Contains(comments[0], "This file describes a Fastly Compute package") {
		t.Fatalf("the rewrite should keep only the CLI's own two comment lines, not %q", comments)
	}
	before, after := decodeSetup(t, filepath.Join(dir, "original.toml")), decodeSetup(t, path)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("the CLI's rewrite changed [setup]:\nbefore %+v\nafter  %+v", before, after)
	}
	mb, err := fastlyhost.LoadManifest(filepath.Join(dir, "original.toml"))
	if err != nil {
		t.Fatal(err)
	}
	ma, err := fastlyhost.LoadManifest(path)
	if err != nil {
		t.Fatalf("the local host cannot read fastly.toml after a publish: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, fastlyhost.LocalManifest)); !bytes.Equal(after, local) {
		t.Errorf("the CLI rewrote %s", fastlyhost.LocalManifest)
	}
	// What the local host reads after the rewrite is what it read before:
	// the Germany sale's loopback address and the office bypass included.
	if !reflect.DeepEqual(mb, ma) {
		t.Fatalf("the CLI's rewrite changed what the local host reads:\nbefore %+v\nafter  %+v", mb, ma)
	}
	if ma.Geo["127.0.0.2"]["country_code"] != "DE" || ma.ACLs["office"] == nil {
		t.Errorf("after a publish the local host has no Germany at 127.0.0.2 (%v) or no office ACL (%v)", ma.Geo["127.0.0.2"], ma.ACLs["office"] != nil)
	}
}

// TestFastlyCLIServe runs `fastly compute serve --skip-build --viceroy-path`
// with the local Compute host in Viceroy's place, as the README says users
// without Viceroy do, in a copy of the project whose bin/main.wasm is the
// wasm under test, its config store asking for reused sandboxes whatever
// the build's default: fsthttp.ServeMany must serve several requests in one
// sandbox there too.
func TestFastlyCLIServe(t *testing.T) {
	cli := fastlyCLI(t)
	wasm, err := os.ReadFile(wasmPath())
	if err != nil {
		t.Fatalf("%v (run make build, or set WASM)", err)
	}
	dir := projectCopy(t)
	writeFile(t, filepath.Join(dir, "bin", "main.wasm"), wasm)
	reuseSandboxes(t, filepath.Join(dir, "devconfig.json"))
	host := filepath.Join(t.TempDir(), "fastlyhost")
	if out, err := exec.Command("go", "build", "-o", host, "../../cmd/fastlyhost").CombinedOutput(); err != nil {
		t.Fatalf("build fastlyhost: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(cli, "compute", "serve", "--skip-build", "--non-interactive", "--viceroy-path", host, "--addr", addr)
	cmd.Dir = dir
	cmd.Env = cliEnv(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The CLI and the host write while the test reads.
	var out devstack.LogBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The CLI restarts a host that exits and ignores SIGTERM: stop the
		// whole process group with SIGINT, then make sure.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/_wr/admin")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") ||
				!strings.Contains(string(body), "admin: wrong or missing password") {
				t.Fatalf("the admin panel through fastly compute serve: %d %v %s", resp.StatusCode, resp.Header, body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fastly compute serve did not answer on %s within 60s: %v\n%s", addr, err, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "Fastly calls bound") {
		t.Fatalf("the CLI did not run the local Compute host:\n%s", out.String())
	}
	// One request at a time, so the host hands each to the sandbox that
	// served the one before.
	for i := 0; i < 3; i++ {
		resp, err := http.Get("http://" + addr + "/_wr/admin")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("request %d through fastly compute serve: %d", i, resp.StatusCode)
		}
	}
	// The host logs a reused request as it hands it over; the CLI
	// relays the host's output in its own time.
	if !eventually(func() bool { return reusedLine.MatchString(out.String()) }) {
		t.Fatalf("no request was served by a reused sandbox:\n%s", out.String())
	}
}

// reuseSandboxes sets sandbox_requests to 100 in a devconfig.json.
func reuseSandboxes(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var config map[string]string
	if err := json.Unmarshal(b, &config); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	config[edge.KeySandboxRequests] = "100"
	if b, err = json.Marshal(config); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b)
}

// sortedKeys lists a map's keys in order, for messages and comparisons.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decodeSetup reads a manifest's [setup] with the CLI's schema, failing on
// any key the CLI would silently drop.
func decodeSetup(t *testing.T, path string) setupSection {
	t.Helper()
	var m struct {
		Setup setupSection `toml:"setup"`
	}
	md, err := toml.DecodeFile(path, &m)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "setup" {
			t.Errorf("%s: [setup] key %q is not in the Fastly CLI's schema (pkg/manifest/setup.go): the CLI would ignore it", path, k.String())
		}
	}
	return m.Setup
}
