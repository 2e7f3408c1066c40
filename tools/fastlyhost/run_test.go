package fastlyhost

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"strings"
	"testing"
)

// unreachableModule is the smallest module whose _start traps: one
// function, exported as _start, whose body is the unreachable instruction.
var unreachableModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // types: () -> ()
	0x03, 0x02, 0x01, 0x00, // functions: one of type 0
	0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00, // exports: _start = func 0
	0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b, // code: no locals, unreachable, end
}

// TestRun checks Viceroy's run subcommand as `go test -exec` uses it: the
// arguments reach the module after its name, the exit code comes back, the
// environment and the placeholder downstream request are Viceroy's
// (ExecuteCtx::run_main), and a trap exits as an abort does.
func TestRun(t *testing.T) {
	guest := mustBuildGuest(t, "runguest")
	tests := []struct {
		name     string
		wasm     []byte
		args     []string
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{"arguments and exit code pass through", guest, []string{"3", "-test.v=true", "-C", "x"}, 3, []string{
			`args ["3" "-test.v=true" "-C" "x"]`,
			"FASTLY_HOSTNAME=localhost", "FASTLY_POP=XXX", "FASTLY_REGION=Somewhere",
			"FASTLY_SERVICE_VERSION=0", "FASTLY_IS_STAGING=0", "FASTLY_TRACE_ID=00000000000000000000000000000000",
			"downstream GET http://example.com/ from 127.0.0.1",
		}, ""},
		{"exit 0", guest, nil, 0, []string{"args []"}, ""},
		{"a trap exits as an abort", unreachableModule, nil, 134, nil, "unreachable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h, err := New(ctx, tc.wasm, &Manifest{}, Options{Log: log.New(io.Discard, "", 0)})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close(ctx)
			var stdout, stderr bytes.Buffer
			code, err := h.Run(ctx, "runguest", tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (err %v; stdout %q)", code, tc.wantCode, err, stdout.String())
			}
			if gotErr := fmt.Sprint(err); tc.wantErr == "" && err != nil || tc.wantErr != "" && !strings.Contains(gotErr, tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(stdout.String(), want+"\n") {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			if tc.wasm != nil && len(tc.wantOut) > 0 && stderr.String() != "to stderr\n" {
				t.Errorf("stderr = %q, want the guest's own", stderr.String())
			}
		})
	}
}
