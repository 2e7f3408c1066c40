package conformance

import (
	"regexp"
	"slices"
	"strings"
)

// Status is what one package did under one build.
type Status string

// The statuses a package can end with.
const (
	// Pass: every test ran and passed, and at least one ran.
	Pass Status = "pass"
	// Fail: a test failed, the binary failed, or it did not build.
	Fail Status = "fail"
	// NoTests: the package built and ran, but holds no test that runs
	// (examples without an Output comment only compile).
	NoTests Status = "no tests"
	// Skipped: the package was not run, for a reason given.
	Skipped Status = "skipped"
)

// Outcome is a parsed `go test -v` (or `tinygo test -v`) run of one
// package.
type Outcome struct {
	Status Status
	// Passed, Failed and SkippedTests count the top-level tests and
	// subtests by their result lines.
	Passed, Failed, SkippedTests int
	// Detail is, for a failure, the first failing test and the first line
	// it logged (usually the assertion, file:line and message), or the
	// last lines of output when no test line says why.
	Detail string
}

var (
	resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)
	runLine    = regexp.MustCompile(`^=== RUN\s+(\S+)`)
	// loggedLine is a line a test logged: indented, and under Go prefixed
	// with file:line (TinyGo prints the message alone).
	loggedLine = regexp.MustCompile(`^\s{4}\S`)
	// summaryLine is go test's or tinygo test's verdict on a package,
	// which says nothing of why.
	summaryLine = regexp.MustCompile(`^(PASS|FAIL|ok\s.*|FAIL\s.*|exit status \d+)$`)
)

// Parse reads the verbose output of one package's test run and the run's
// exit status. A run that exits non-zero fails even if every test line
// says PASS: a trap after the tests, or a build failure, is a failure.
//
// Go prints what a test logged before its result line; TinyGo does too,
// without file:line, and a test that calls t.Fatal under TinyGo goes on
// (it has no runtime.Goexit) and may panic before any result line. So the
// detail of a failure is the test's first logged line, and for a run that
// died, the test that was running and the panic.
func Parse(output string, exitOK bool) Outcome {
	var o Outcome
	lines := strings.Split(strings.ReplaceAll(output, "\r\n", "\n"), "\n")
	ran := 0
	running, firstLog, panicLine := "", map[string]string{}, ""
	var failed []string
	for _, line := range lines {
		if m := runLine.FindStringSubmatch(line); m != nil {
			ran++
			running = m[1]
			continue
		}
		if strings.HasPrefix(line, "panic: ") && panicLine == "" {
			panicLine = strings.TrimSpace(line)
		}
		m := resultLine.FindStringSubmatch(line)
		if m == nil {
			if running != "" && firstLog[running] == "" && loggedLine.MatchString(line) {
				firstLog[running] = strings.TrimSpace(line)
			}
			continue
		}
		running = ""
		switch m[1] {
		case "PASS":
			o.Passed++
		case "SKIP":
			o.SkippedTests++
		case "FAIL":
			o.Failed++
			failed = append(failed, m[2])
		}
	}
	// A parent test fails after its subtests, having logged nothing
	// itself: the first failure that logged a line says most.
	for _, name := range failed {
		if o.Detail == "" || firstLog[name] != "" {
			o.Detail = join(name, firstLog[name])
		}
		if firstLog[name] != "" {
			break
		}
	}
	switch {
	case o.Failed > 0:
		o.Status = Fail
	case !exitOK:
		o.Status = Fail
		if running != "" {
			o.Failed++
			o.Detail = join(running, firstLog[running], panicLine)
		} else {
			o.Detail = lastLines(lines, 3)
		}
	case ran == 0:
		o.Status = NoTests
	default:
		o.Status = Pass
	}
	return o
}

// join joins the non-empty parts of a detail with ": ".
func join(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), ": ")
}

// lastLines returns the last n lines that say something, joined by " / ":
// not blank, and neither go test's own summary lines nor test results.
func lastLines(lines []string, n int) string {
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || summaryLine.MatchString(l) || runLine.MatchString(l) || resultLine.MatchString(l) {
			continue
		}
		keep = append([]string{l}, keep...)
	}
	return strings.Join(keep, " / ")
}
