package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The outputs below are what go test and tinygo test printed for the SDK's
// packages against the host (trimmed), so the parser is tested on the real
// shapes: Go's logs before the result line, TinyGo's logs without
// file:line, and TinyGo's t.Fatal that goes on and panics.
func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		output string
		exitOK bool
		want   Outcome
	}{
		{"go pass", "=== RUN   TestStatus\n--- PASS: TestStatus (0.00s)\nPASS\nok  \tgithub.com/fastly/compute-sdk-go/integration_tests/status\t2.1s\n", true,
			Outcome{Status: Pass, Passed: 1}},
		{"go fail: the logged line before the result names the assertion",
			"=== RUN   TestGetVcpuMs\n    main_test.go:27: Sleeping shouldn't count as vcpu time!\n--- FAIL: TestGetVcpuMs (1.00s)\n" +
				"=== RUN   TestGetHeapMiB\n    main_test.go:56: Couldn't get heap mib\n    main_test.go:60: Heap mib should be non-zero\n--- FAIL: TestGetHeapMiB (0.00s)\nFAIL\nFAIL\tgithub.com/fastly/compute-sdk-go/integration_tests/compute_runtime\t3.0s\nFAIL\n",
			false, Outcome{Status: Fail, Failed: 2, Detail: "TestGetVcpuMs: main_test.go:27: Sleeping shouldn't count as vcpu time!"}},
		{"tinygo: t.Fatal goes on, then a panic and no result line",
			"=== RUN   TestACL\n    acl: unexepected error (Unsupported)\n    FailNow is incomplete, requires runtime.Goexit()\npanic: runtime error: nil pointer dereference\n" +
				"2026/11/22 12:43:45 fastlyhost: module[] function[_start] failed: wasm error: unreachable\nwasm stack trace:\n\t.runtime.nilPanic()\nFAIL\tgithub.com/fastly/compute-sdk-go/integration_tests/acl\t1.104s\n",
			false, Outcome{Status: Fail, Failed: 1, Detail: "TestACL: acl: unexepected error (Unsupported): panic: runtime error: nil pointer dereference"}},
		{"subtests: the failing subtest that logged, not its silent parent",
			"=== RUN   TestKV\n=== RUN   TestKV/ok\n=== RUN   TestKV/bad\n    main_test.go:10: got 1, want 2\n--- FAIL: TestKV (0.00s)\n    --- PASS: TestKV/ok (0.00s)\n    --- FAIL: TestKV/bad (0.00s)\nFAIL\n",
			false, Outcome{Status: Fail, Passed: 1, Failed: 2, Detail: "TestKV/bad: main_test.go:10: got 1, want 2"}},
		{"examples without output: no tests", "testing: warning: no tests to run\nPASS\nok  \tgithub.com/fastly/compute-sdk-go/erl\t3.1s [no tests to run]\n", true,
			Outcome{Status: NoTests}},
		{"every test passed, then the binary trapped", "=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nfastlyhost: wasm error: unreachable\nFAIL\tpkg\t0.1s\n", false,
			Outcome{Status: Fail, Passed: 1, Detail: "fastlyhost: wasm error: unreachable"}},
		{"build failure", "# github.com/fastly/compute-sdk-go/x\nx/main_test.go:3:2: undefined: y\nFAIL\tgithub.com/fastly/compute-sdk-go/x [build failed]\n", false,
			Outcome{Status: Fail, Detail: "# github.com/fastly/compute-sdk-go/x / x/main_test.go:3:2: undefined: y"}},
		{"skips count, and do not fail", "=== RUN   TestA\n    main_test.go:5: needs the platform\n--- SKIP: TestA (0.00s)\n=== RUN   TestB\n--- PASS: TestB (0.00s)\nPASS\n", true,
			Outcome{Status: Pass, Passed: 1, SkippedTests: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse(tc.output, tc.exitOK); got != tc.want {
				t.Errorf("Parse:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDiscoverAndCopy(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"go.mod":                                   "module github.com/fastly/compute-sdk-go\n",
		"integration_tests/acl/fastly.toml":        "[local_server.backends.a]\nurl = \"https://internet.example/\"\n",
		"integration_tests/acl/main_test.go":       "package main\n",
		"integration_tests/httpcache/main.go":      "package main\n", // no fastly.toml: not a test package
		"integration_tests/_version/fastly.toml":   "name = \"v\"\n",
		"end_to_end_tests/serve-many/fastly.toml":  "name = \"s\"\n",
		"erl/fastly.toml":                          "name = \"e\"\n",
		"_examples/hello/fastly.toml":              "name = \"x\"\n",
		"fsthttp/imageopto/fastly.toml":            "name = \"i\"\n",
		"end_to_end_tests/serve-many/main_test.go": "package main\n",
	}
	for name, text := range files {
		path := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "sdk")
	rewrite := func(b []byte) ([]byte, error) {
		return bytes.ReplaceAll(b, []byte("https://internet.example/"), []byte("http://127.0.0.1:1/")), nil
	}
	rewritten, err := Copy(src, dst, rewrite)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"integration_tests/acl": true}; !reflect.DeepEqual(rewritten, want) {
		t.Errorf("rewritten = %v, want %v", rewritten, want)
	}
	got, err := os.ReadFile(filepath.Join(dst, "integration_tests/acl/fastly.toml"))
	if err != nil || !strings.Contains(string(got), "http://127.0.0.1:1/") {
		t.Errorf("copied fastly.toml = %q, %v: want its backend rewritten", got, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "integration_tests/acl/main_test.go")); string(got) != "package main\n" {
		t.Errorf("copied test = %q: want it byte for byte", got)
	}
	// The copy must be writable: TinyGo's target file is written into it.
	if err := os.WriteFile(filepath.Join(dst, "integration_tests/acl/fastly.toml"), nil, 0o644); err != nil {
		t.Errorf("the copy is not writable: %v", err)
	}

	pkgs, err := Discover(dst)
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{
		{"integration_tests/_version", Integration, false}, {"integration_tests/acl", Integration, false},
		{"end_to_end_tests/serve-many", EndToEnd, false},
		{"erl", Unit, false}, {"fsthttp/imageopto", Unit, false},
	}
	if !reflect.DeepEqual(pkgs, want) {
		t.Errorf("Discover = %v, want %v", pkgs, want)
	}
}

func TestCheck(t *testing.T) {
	expected := map[string]map[Build]Expectation{
		"a": {Go: {Status: Pass}, TinyGo: {Status: Pass}},
		"b": {Go: {Status: Fail, Why: "platform only"}, TinyGo: {Status: Fail, Why: "platform only"}},
	}
	res := func(dir string, b Build, s Status) Result {
		return Result{Package: Package{Dir: dir}, Build: b, Outcome: Outcome{Status: s, Detail: "d"}}
	}
	tests := []struct {
		name    string
		results []Result
		want    []string
	}{
		{"as expected", []Result{res("a", Go, Pass), res("b", TinyGo, Fail)}, nil},
		{"no TinyGo here is no difference", []Result{res("a", TinyGo, Skipped)}, nil},
		{"a regression", []Result{res("a", TinyGo, Fail)}, []string{"a (TinyGo): fail (d), expected pass"}},
		{"newly passing", []Result{res("b", Go, Pass)}, []string{"b (Go): pass (d), expected fail"}},
		{"a package no one wrote down", []Result{res("c", Go, Pass)}, []string{"c (Go): pass (d), and no expectation is written for it in tools/conformance/expected.go"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Check(tc.results, expected); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTableAndSplice(t *testing.T) {
	expected := map[string]map[Build]Expectation{
		"integration_tests/acl":       {Go: {Status: Pass}, TinyGo: {Status: Pass}},
		"integration_tests/shielding": {Go: {Status: Fail, Why: "shield_info needs Fastly's POPs"}, TinyGo: {Status: Skipped}},
	}
	results := []Result{
		{Package: Package{"integration_tests/acl", Integration, true}, Build: Go, Outcome: Outcome{Status: Pass, Passed: 3}},
		{Package: Package{"integration_tests/acl", Integration, true}, Build: TinyGo, Outcome: Outcome{Status: Pass, Passed: 3}},
		{Package: Package{"integration_tests/shielding", Integration, false}, Build: Go, Outcome: Outcome{Status: Fail, Passed: 1, Failed: 1, Detail: "TestShield: boom"}},
		{Package: Package{"integration_tests/shielding", Integration, false}, Build: TinyGo, Outcome: Outcome{Status: Skipped, Detail: "TinyGo is not installed"}},
	}
	// A package with a known race that failed, then passed.
	expected["end_to_end_tests/serve-many"] = map[Build]Expectation{Go: {Status: Pass, Race: "It races."}}
	results = append(results, Result{Package: Package{"end_to_end_tests/serve-many", EndToEnd, false}, Build: Go,
		Outcome: Outcome{Status: Pass, Passed: 1}, FirstRun: &Outcome{Status: Fail, Failed: 1, Detail: "TestSandboxReuse: boom"}})
	table := Table(results, expected, map[string]string{"integration_tests/acl": "ACLs"})
	want := "| SDK package | kind | exercises | backends | Go | TinyGo |\n|---|---|---|---|---|---|\n" +
		"| `integration_tests/acl` | integration | ACLs | stand-in | pass (3/3) | pass (3/3) |\n" +
		"| `integration_tests/shielding` | integration |  |  | fail (1/2) [1] | skipped [2] |\n" +
		"| `end_to_end_tests/serve-many` | end to end |  |  | pass (1/1) [3] | not run |\n" +
		"\n1. integration_tests/shielding (Go): shield_info needs Fastly's POPs\n" +
		"2. integration_tests/shielding (TinyGo): TinyGo is not installed\n" +
		"3. end_to_end_tests/serve-many (Go): passed on a second run; the first failed (TestSandboxReuse: boom). It races.\n"
	if table != want {
		t.Errorf("Table:\n%s\nwant:\n%s", table, want)
	}

	readme := "# R\n\n" + BeginMarker + "\nold table\n" + EndMarker + "\nafter\n"
	got, err := Splice(readme, table)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# R\n\n" + BeginMarker + "\n" + table + EndMarker + "\nafter\n"; got != want {
		t.Errorf("Splice = %q, want %q", got, want)
	}
	if _, err := Splice("# no markers\n", table); err == nil {
		t.Error("Splice into a README without markers: no error")
	}
}
