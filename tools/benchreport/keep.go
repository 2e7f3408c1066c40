package benchreport

import "strings"

// ReuseHeading opens BENCHMARKS.md's section on reusable sandboxes, measured
// by hand with the e2e benchmarks (it says how), not by make bench.
const ReuseHeading = "## Reusable sandboxes: fresh against reused, both builds"

// KeptHeadings start the sections a run of make bench does not write but
// keeps from the BENCHMARKS.md it replaces: the POPs' snapshot at the
// workload sizes it did not play, and what was measured by hand.
func KeptHeadings() []string { return []string{popHeading, ReuseHeading} }

// KeepSections is doc with the sections of old whose heading starts with
// one of headings and that doc lacks.
func KeepSections(old, doc string, headings ...string) string {
	for _, line := range strings.Split(old, "\n") {
		for _, h := range headings {
			if strings.HasPrefix(line, h) && headingAt(doc, line) < 0 {
				doc = ReplaceSection(doc, SectionOf(old, line))
			}
		}
	}
	return doc
}
