package e2e

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeCommand runs make serve's program with the embedded Redis, as on
// a machine without redis-server, runs the README tour's first command
// against it, and stops it with Ctrl-C.
func TestServeCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "serve")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/serve").CombinedOutput(); err != nil {
		t.Fatalf("build serve: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-C", filepath.Join("..", "..", "..", "fastly.toml"), "-wasm", wasmPath(),
		"-addr", "127.0.0.1:0", "-upstash-addr", "127.0.0.1:0", "-origin-addr", "127.0.0.1:0", "-embedded-redis")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var log strings.Builder
	room := regexp.MustCompile(`waiting room:\s+(http://\S+)/`)
	var url string
	for !strings.Contains(log.String(), "press Ctrl-C") {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited:\n%s", log.String())
			}
			log.WriteString(l + "\n")
			if m := room.FindStringSubmatch(l); m != nil {
				url = m[1]
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("serve did not get ready:\n%s", log.String())
		}
	}
	if !strings.Contains(log.String(), "(embedded)") || !strings.Contains(log.String(), `password "dev-admin-password"`) {
		t.Fatalf("serve should say it runs the embedded Redis and print the admin password:\n%s", log.String())
	}
	tourCommand(t, url)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve did not stop cleanly on Ctrl-C: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10s of Ctrl-C")
	}
	if _, err := http.Get(url + "/"); err == nil {
		t.Fatal("the waiting room still answers after Ctrl-C")
	}
}

// tourCommand runs the shell command of the README tour's first step, as
// printed there, against the waiting room at url: its visitors reach the
// origin until the room is full, then wait in line; none is left at
// "joining" (a client without a cookie jar never gets further).
func tourCommand(t *testing.T, url string) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Log("SKIPPED the README tour's command: no curl on PATH (apt-get install curl)")
		return
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)1\\. \\*\\*Join the line\\.\\*\\*.*?```sh\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md's tour has no shell command in its first step")
	}
	script := strings.ReplaceAll(string(block[1]), "http://127.0.0.1:7676", url)
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = t.TempDir() // the cookie jars
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tour's command: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "<!doctype html>") || !strings.Contains(text, `"status":"waiting"`) || strings.Contains(text, `"joining"`) {
		t.Errorf("the tour's command printed, want the origin's page and then places in line:\n%s", text)
	}
}
