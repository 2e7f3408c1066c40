package e2e

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeCommand runs make serve's program with the embedded Redis, as on
// a machine without redis-server, and stops it with Ctrl-C.
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
	// As a browser: the arrival redirect, then the same URL with its cookie.
	resp, err := client.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, url+"/", nil)
	for _, c := range resp.Cookies() {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	if resp, err = client.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "You reached the origin") {
		t.Fatalf("through make serve's stack: %d %s", resp.StatusCode, body)
	}
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
