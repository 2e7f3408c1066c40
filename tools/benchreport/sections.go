package benchreport

import (
	"fmt"
	"slices"
	"strings"
)

// BENCHMARKS.md is made of named sections, each written by one make
// target and by no other. A section stands between two HTML comments,
// which Markdown does not show:
//
//	<!-- section floods: written by make bench-floods -->
//	## Bot floods
//	...
//	<!-- end section floods -->
//
// A target rewrites its own sections and leaves every other byte of the
// file as it found it, so a long run cannot write back another target's
// section as it stood when the run began: it never held that section.

// A Section is one named part of BENCHMARKS.md: Text is its Markdown, from
// its "## " heading on.
type Section struct{ Name, Text string }

// sectionOwners are the sections in the order they stand in the file,
// each with the make target that writes it.
var sectionOwners = []struct{ name, target string }{
	{"summary", "bench"},
	{"flash-crowd", "bench"},
	{"script", "bench-script"},
	{"floods", "bench-floods"},
	{"work", "bench-work"},
	{"bots", "bench-bots"},
	{"fairness", "bench-fairness"},
	{"heartbeat", "bench-heartbeat"},
	{"pops", "bench-pops"},
	{"pops-large", "bench-pops-large"},
	{"shards", "bench-shards"},
	{"end-to-end", "bench"},
	{"reuse", "bench-host"},
	{"floor", "bench-host"},
	{"figures", "figures"},
	{"hot-paths", "bench"},
}

// SectionOwner is the make target that writes the named section.
func SectionOwner(name string) (target string, ok bool) {
	i := slices.IndexFunc(sectionOwners, func(o struct{ name, target string }) bool { return o.name == name })
	if i < 0 {
		return "", false
	}
	return sectionOwners[i].target, true
}

// WriteSections puts each of sections, all of them target's, in doc in
// place of its old text, or, when doc lacks it, before the first section
// that follows it in the file's order (at the end if none does). It fails,
// changing nothing, on a section another target owns or a section whose
// end marker is missing.
func WriteSections(doc, target string, sections ...Section) (string, error) {
	for _, s := range sections {
		owner, ok := SectionOwner(s.Name)
		switch {
		case !ok:
			return "", fmt.Errorf("BENCHMARKS.md has no section %q", s.Name)
		case owner != target:
			return "", fmt.Errorf("section %q of BENCHMARKS.md is written by make %s, not make %s", s.Name, owner, target)
		}
		var err error
		if doc, err = writeSection(doc, s, owner); err != nil {
			return "", err
		}
	}
	return doc, nil
}

func beginMarker(name string) string { return "<!-- section " + name + ":" }
func endMarker(name string) string   { return "<!-- end section " + name + " -->" }

// writeSection writes one section, owned by target, into doc.
func writeSection(doc string, s Section, target string) (string, error) {
	block := beginMarker(s.Name) + " written by make " + target + " -->\n" +
		strings.TrimSpace(s.Text) + "\n" + endMarker(s.Name) + "\n"
	if i := strings.Index(doc, beginMarker(s.Name)); i >= 0 {
		j := strings.Index(doc[i:], endMarker(s.Name))
		if j < 0 {
			return "", fmt.Errorf("BENCHMARKS.md: section %q has no %q", s.Name, endMarker(s.Name))
		}
		rest := doc[i+j+len(endMarker(s.Name)):]
		return doc[:i] + block + strings.TrimPrefix(rest, "\n"), nil
	}
	after := false
	for _, o := range sectionOwners {
		if o.name == s.Name {
			after = true
			continue
		}
		if i := strings.Index(doc, beginMarker(o.name)); after && i >= 0 {
			return doc[:i] + block + "\n" + doc[i:], nil
		}
	}
	if strings.TrimSpace(doc) == "" {
		return block, nil
	}
	return strings.TrimRight(doc, "\n") + "\n\n" + block, nil
}

// SectionText is the text of the named section in doc, without its
// markers, or "" when doc has none.
func SectionText(doc, name string) string {
	i := strings.Index(doc, beginMarker(name))
	if i < 0 {
		return ""
	}
	body := doc[i:]
	body = body[strings.Index(body, "\n")+1:]
	if j := strings.Index(body, endMarker(name)); j >= 0 {
		body = body[:j]
	}
	return body
}
