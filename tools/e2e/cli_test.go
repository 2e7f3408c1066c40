package e2e

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFastlyCLIServe runs `fastly compute serve --viceroy-path` with the
// local Compute host in Viceroy's place, as users without Viceroy do.
func TestFastlyCLIServe(t *testing.T) {
	cli, err := filepath.Abs(filepath.Join("..", "fastlycli", "node_modules", "@fastly", "cli-linux-x64", "fastly"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("the Fastly CLI is not installed: run `npm ci` in tools/fastlycli (make test does): %v", err)
	}
	host := filepath.Join(t.TempDir(), "fastlyhost")
	if out, err := exec.Command("go", "build", "-o", host, "../cmd/fastlyhost").CombinedOutput(); err != nil {
		t.Fatalf("build fastlyhost: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(cli, "compute", "serve", "--skip-build", "--non-interactive", "--viceroy-path", host, "--addr", addr)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "FASTLY_CLI_TELEMETRY=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
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
}
