package benchreport

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FiguresHeading opens the section of figures the docs quote: the size of
// each build's module and the Fastly CLI the tests run.
const FiguresHeading = "## Figures the docs quote: module sizes and the Fastly CLI"

// Module is one build of bin/main.wasm, measured.
type Module struct {
	// Build is the compiler ("TinyGo", "Go"), Toolchain its version, Path
	// the module as make builds it.
	Build, Toolchain, Path string
	Bytes                  int64
}

// MB is a module size as the docs quote it: megabytes of 10^6 bytes, two
// decimals ("1.89 MB").
func MB(bytes int64) string { return strconv.FormatFloat(float64(bytes)/1e6, 'f', 2, 64) + " MB" }

// FastlyCLIVersion is the Fastly CLI version tools/fastlycli installs: the
// version of its one dependency in package.json.
func FastlyCLIVersion(packageJSON string) (string, error) {
	b, err := os.ReadFile(packageJSON)
	if err != nil {
		return "", err
	}
	var p struct{ Dependencies map[string]string }
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("%s: %w", packageJSON, err)
	}
	for name, v := range p.Dependencies {
		if strings.HasPrefix(name, "@fastly/cli") {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s names no @fastly/cli package", packageJSON)
}

// FiguresSection renders the figures' section: each module's size and
// the CLI's version.
func FiguresSection(res Results, modules []Module, cliVersion string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("%s\n\nWritten by `%s` on %s from the modules it built and `tools/fastlycli/package.json`; quote these, not figures typed by hand (a test compares this section with package.json, and with the modules when they are built).\n\n",
		FiguresHeading, res.Command, res.Date.UTC().Format("2006-01-02 15:04 MST"))
	w("| figure | value | from |\n|---|---:|---|\n")
	for _, m := range modules {
		w("| %s module (%s) | %s (%s bytes) | `%s` |\n", m.Build, m.Toolchain, MB(m.Bytes), thousands(float64(m.Bytes)), m.Path)
	}
	w("| Fastly CLI the tests run | %s | `tools/fastlycli/package.json` |\n", cliVersion)
	return b.String()
}
