// Package locale is what the visitor pages need to speak a visitor's
// language: choosing the language from Accept-Language, the pages' words
// in each language the waiting room speaks, and numbers, durations and
// wait ranges written the way a reader of that language expects.
//
// Everything is literal data and plain functions: no tables are built at
// start-up (TinyGo evaluates package initializers at compile time, see
// tools/edgerules), and formatting uses neither fmt nor regexp, which cost
// a waiting visitor's request time under TinyGo.
package locale

import "strings"

// Default is the language used when neither the visitor nor the room
// names one the waiting room speaks.
const Default = "en"

// languages are the languages the pages speak, in the order a wildcard
// falls back through.
var languages = [...]string{"en", "de", "fr", "es", "ja", "pt"}

// Languages returns the language codes the pages speak.
func Languages() []string {
	out := make([]string, len(languages))
	copy(out, languages[:])
	return out
}

// Supported reports whether lang is a language the pages speak (a code as
// Languages lists it: lower case, no region).
func Supported(lang string) bool {
	return index(lang) >= 0
}

// index is lang's position in languages, or -1.
func index(lang string) int {
	for i, l := range languages {
		if l == lang {
			return i
		}
	}
	return -1
}

// Bounds on the header Negotiate reads: a browser sends a few ranges in a
// few dozen bytes; a longer header is read up to these limits and the
// rest ignored, so a hostile one costs no more than a normal one.
const (
	maxHeader = 1024
	maxRanges = 32
)

// Negotiate picks the page language for an Accept-Language header (RFC
// 9110 section 12.5.4, RFC 4647 basic filtering): the supported language
// with the highest quality, the earliest listed among equals. A range
// matches by its primary subtag (de-AT asks for de); * stands for def;
// q=0 on a language alone refuses it (de;q=0), whatever other ranges ask.
// def (the room's language) answers a header that names nothing the pages
// speak, and when def is not supported either, Default does. Malformed
// ranges are skipped, not fatal: browsers and proxies send odd headers,
// and a visitor still gets a page.
func Negotiate(acceptLanguage, def string) string {
	if !Supported(def) {
		def = Default
	}
	if len(acceptLanguage) > maxHeader {
		acceptLanguage = acceptLanguage[:maxHeader]
	}
	// Per language: its best quality (thousandths, -1 unasked), when it
	// was first asked for, and whether it was refused.
	var q, seen [len(languages)]int
	var refused [len(languages)]bool
	for i := range q {
		q[i] = -1
	}
	rest := acceptLanguage
	for n := 0; rest != "" && n < maxRanges; n++ {
		item := rest
		if i := strings.IndexByte(rest, ','); i >= 0 {
			item, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		tag, quality, ok := parseRange(item)
		if !ok {
			continue
		}
		lang := def
		if tag != "*" {
			primary, _, _ := strings.Cut(tag, "-")
			lang = lowerASCII(primary)
		}
		i := index(lang)
		switch {
		case i < 0:
		case quality == 0 && tag != "*" && len(lang) == len(tag):
			// Only a range naming the language alone refuses it:
			// de-AT;q=0 leaves de itself acceptable.
			refused[i] = true
		case quality > q[i]:
			if q[i] < 0 {
				seen[i] = n
			}
			q[i] = quality
		}
	}
	best := -1
	for i := range languages {
		if q[i] <= 0 || refused[i] {
			continue
		}
		if best < 0 || q[i] > q[best] || q[i] == q[best] && seen[i] < seen[best] {
			best = i
		}
	}
	switch {
	case best >= 0:
		return languages[best]
	case !refused[index(def)]:
		return def
	}
	for i, l := range languages {
		if !refused[i] {
			return l
		}
	}
	return def // every language refused: a page must still be in one
}

// parseRange reads one "tag;q=0.8" item: the tag (letters, digits and
// hyphens, or *) and its quality in thousandths (1000 when absent).
func parseRange(item string) (tag string, q int, ok bool) {
	tag, params, _ := strings.Cut(item, ";")
	tag = strings.TrimSpace(tag)
	if !validTag(tag) {
		return "", 0, false
	}
	q = 1000
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found || strings.TrimSpace(name) != "q" && strings.TrimSpace(name) != "Q" {
			return "", 0, false
		}
		if q, ok = parseQ(strings.TrimSpace(value)); !ok {
			return "", 0, false
		}
	}
	return tag, q, true
}

// validTag accepts * and subtags of 1 to 8 characters joined by hyphens:
// letters in the first, letters and digits after (RFC 4647's
// language-range).
func validTag(tag string) bool {
	if tag == "*" {
		return true
	}
	if tag == "" || len(tag) > 64 {
		return false
	}
	run, first := 0, true
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		switch {
		case c == '-':
			if run == 0 {
				return false
			}
			run, first = 0, false
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9':
			if run++; run > 8 {
				return false
			}
		default:
			return false
		}
	}
	return run > 0
}

// parseQ reads a qvalue ("0", "0.5", "1", "1.000", at most three
// decimals) in thousandths.
func parseQ(s string) (int, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	whole := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return whole, true
	}
	if s[1] != '.' {
		return 0, false
	}
	frac, scale := 0, 100
	for i := 2; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' || whole == 1000 && c != '0' {
			return 0, false
		}
		frac += int(c-'0') * scale
		scale /= 10
	}
	return whole + frac, true
}

// lowerASCII lowers A-Z, allocating only when it changes something.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
