package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestViceroyCommandLine reads the command lines Viceroy's clap parser
// takes or refuses (cli/src/opts.rs in fastly/Viceroy), including what
// `fastly compute serve` passes (pkg/commands/compute/serve.go in
// fastly/cli): flags after the wasm path must count, never be dropped.
func TestViceroyCommandLine(t *testing.T) {
	cli := []string{"-v", "-C", "/p/fastly.toml", "--addr", "127.0.0.1:7999", "/p/bin/main.wasm"}
	with := func(extra ...string) []string { return append(append([]string(nil), cli...), extra...) }
	tests := []struct {
		name    string
		args    []string
		want    options // checked when wantErr is empty
		wantErr string
	}{
		{"fastly compute serve", cli, options{manifest: "/p/fastly.toml", addr: "127.0.0.1:7999", wasm: "/p/bin/main.wasm", verbosity: 1}, ""},
		{"--debug", with("--debug"), options{}, "--debug is not supported"},
		{"--profile-guest", with("--profile=guest,guest-profiles"), options{}, "--profile=guest,guest-profiles is not supported"},
		{"--profile with its value apart", with("--profile", "perfmap"), options{}, "--profile=perfmap is not supported"},
		{"--profile with a sample period", with("--profile=guest,dir,250us"), options{}, "is not supported"},
		{"--profile invalid", with("--profile=bogus"), options{}, "invalid value 'bogus' for '--profile <STRATEGY>'"},
		{"--profile invalid period", with("--profile=guest,dir,fast"), options{}, "invalid value 'guest,dir,fast'"},
		{"old --profile-guest", with("--profile-guest"), options{}, "--profile-guest is not a Viceroy flag"},
		{"unimplemented Viceroy flag", with("--log-stdout"), options{}, "--log-stdout is not supported"},
		{"pushpin", with("--local-pushpin-proxy-port=5561"), options{}, "--local-pushpin-proxy-port is not supported"},
		{"unknown flag after the wasm", with("--frobnicate"), options{}, "flag provided but not defined"},
		{"second module", with("other.wasm"), options{}, "unexpected argument 'other.wasm'"},
		{"run: the SDK's go test -exec", []string{"run", "-C", "fastly.toml", "/tmp/go-build1/b001/acl.test", "-test.paniconexit0", "-test.timeout=10m0s", "-test.v=true"},
			options{manifest: "fastly.toml", addr: "127.0.0.1:7676", wasm: "/tmp/go-build1/b001/acl.test", run: true,
				args: []string{"-test.paniconexit0", "-test.timeout=10m0s", "-test.v=true"}}, ""},
		{"run: flags after the module are the module's", []string{"run", "x.wasm", "-vv", "-C", "y", "--debug"},
			options{addr: "127.0.0.1:7676", wasm: "x.wasm", run: true, args: []string{"-vv", "-C", "y", "--debug"}}, ""},
		{"run: long flags before the module", []string{"run", "--config=f.toml", "-v", "x.wasm"},
			options{manifest: "f.toml", addr: "127.0.0.1:7676", wasm: "x.wasm", run: true, verbosity: 1}, ""},
		{"run: no -C means no local_server", []string{"run", "x.wasm"}, options{addr: "127.0.0.1:7676", wasm: "x.wasm", run: true}, ""},
		{"run: Viceroy's flags before the module still checked", []string{"run", "--profile=guest", "x.wasm"}, options{}, "--profile=guest is not supported"},
		{"adapt subcommand", []string{"adapt", "x.wasm"}, options{}, "the adapt subcommand is not supported"},
		{"serve subcommand, long flags, -vv after the wasm",
			[]string{"serve", "--config=f.toml", "x.wasm", "-vv", "--addr=[::1]:7676"},
			options{manifest: "f.toml", addr: "[::1]:7676", wasm: "x.wasm", verbosity: 2}, ""},
		{"-pop after the wasm", []string{"x.wasm", "-pop", "FRA"}, options{manifest: "fastly.toml", addr: "127.0.0.1:7676", wasm: "x.wasm", pop: "FRA"}, ""},
		{"-vvv", []string{"-vvv", "x.wasm"}, options{manifest: "fastly.toml", addr: "127.0.0.1:7676", wasm: "x.wasm", verbosity: 3}, ""},
		{"--version", []string{"--version"}, options{manifest: "fastly.toml", addr: "127.0.0.1:7676", wasm: "bin/main.wasm", version: true}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%q: %v, want an error containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
			got.cacheDir, got.timeout = "", 0
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%q: %+v, want %+v", tc.args, got, tc.want)
			}
		})
	}
}
