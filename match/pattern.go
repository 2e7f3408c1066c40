package match

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/edgequeue/waitingroom/urlnorm"
)

// Bounds on what one rule list may hold, so that no configuration, however
// large, makes every request slow: each request walks every list of the
// rooms it could be in.
const (
	// MaxEntries is the most entries one list (hosts, paths, bypass_ips...)
	// may hold. Longer IP lists belong in a Fastly ACL (bypass_acl).
	MaxEntries = 1000
	// MaxEntryLength is the longest one entry may be, in bytes.
	MaxEntryLength = 1024
)

// pattern is one compiled path pattern (see the package doc).
type pattern struct {
	// prefix is the whole pattern when it holds no "*": a path prefix.
	prefix string
	// segments are a glob's "/"-separated segments, each split at its
	// "*"s; the last one has an empty piece appended, so that it matches
	// the start of a path's segment (a glob is a prefix too).
	segments [][]string
	// last marks a last-segment glob (no leading "/"), whose single
	// segment must match the path's last segment whole.
	last bool
	// literal counts the pattern's characters other than "*", which rank
	// rooms (the longer, the more specific).
	literal int
}

// patterns is a compiled list of path patterns.
type patterns struct {
	list  []pattern
	fold  bool
	globs bool // some pattern holds a "*"
}

// compilePatterns checks and compiles a list of path patterns; errors name
// field and index.
func compilePatterns(field string, list []string, fold bool) (patterns, error) {
	if err := checkLength(field, len(list)); err != nil {
		return patterns{}, err
	}
	ps := patterns{list: make([]pattern, 0, len(list)), fold: fold}
	for i, s := range list {
		p, err := compilePattern(s)
		if err != nil {
			return patterns{}, fmt.Errorf("%s[%d]: %q %v", field, i, s, err)
		}
		if fold {
			p = p.folded()
		}
		ps.list = append(ps.list, p)
		ps.globs = ps.globs || p.segments != nil
	}
	return ps, nil
}

// checkLength refuses a list longer than MaxEntries.
func checkLength(field string, n int) error {
	if n > MaxEntries {
		return fmt.Errorf("%s: %d entries, more than the %d allowed", field, n, MaxEntries)
	}
	return nil
}

func compilePattern(s string) (pattern, error) {
	switch {
	case len(s) > MaxEntryLength:
		return pattern{}, fmt.Errorf("is longer than %d bytes", MaxEntryLength)
	case s == "" || s == "*":
		return pattern{}, errors.New(`must start with / (a path prefix such as "/tickets/", "/" for every path) or be a glob for the last segment such as "*.json"`)
	case strings.Contains(s, "**"):
		return pattern{}, errors.New(`holds "**": a * matches within one segment, never across a /; write one * per segment`)
	}
	literal := len(s) - strings.Count(s, "*")
	if !strings.HasPrefix(s, "/") {
		if !strings.Contains(s, "*") {
			return pattern{}, errors.New(`must start with / (a path prefix) or hold a * (a glob for the last segment such as "*.json")`)
		}
		if strings.Contains(s, "/") {
			return pattern{}, errors.New(`is a glob for the last segment, which holds no /; start it with / to match from the root`)
		}
		if err := checkNormal("/" + s); err != nil {
			return pattern{}, err
		}
		return pattern{segments: [][]string{strings.Split(s, "*")}, last: true, literal: literal}, nil
	}
	if err := checkNormal(s); err != nil {
		return pattern{}, err
	}
	if !strings.Contains(s, "*") {
		return pattern{prefix: s, literal: literal}, nil
	}
	p := pattern{literal: literal}
	segs := strings.Split(s[1:], "/")
	for i, seg := range segs {
		if i == len(segs)-1 {
			seg += "*"
		}
		p.segments = append(p.segments, strings.Split(seg, "*"))
	}
	return p, nil
}

// checkNormal refuses a pattern that no normalised path can match, since a
// rule that never matches is a silent hole. "*" is a character urlnorm
// keeps as it is, so the check holds for globs too.
func checkNormal(p string) error {
	n, err := urlnorm.ParsePath(p)
	var bad *urlnorm.Error
	switch {
	case errors.As(err, &bad):
		return errors.New(bad.Problem)
	case err != nil:
		return err
	case n.Literal != p:
		return fmt.Errorf("never matches: requests are matched in normal form; write %q", n.Literal)
	}
	return nil
}

// folded is p with its text in fold form, for case_insensitive_paths.
func (p pattern) folded() pattern {
	p.prefix = foldCase(p.prefix)
	if p.segments == nil {
		return p
	}
	segs := make([][]string, len(p.segments))
	for i, pieces := range p.segments {
		segs[i] = make([]string, len(pieces))
		for j, piece := range pieces {
			segs[i][j] = foldCase(piece)
		}
	}
	p.segments = segs
	return p
}

// match reports whether path (a reading, in fold form when p is) matches;
// segs is path's segments, after its leading "/".
func (p *pattern) match(path string, segs []string) bool {
	switch {
	case p.segments == nil:
		return strings.HasPrefix(path, p.prefix)
	case p.last:
		return glob(p.segments[0], segs[len(segs)-1])
	case len(segs) < len(p.segments):
		return false
	}
	for i, pieces := range p.segments {
		if !glob(pieces, segs[i]) {
			return false
		}
	}
	return true
}

// glob reports whether s matches the pieces of a pattern split at its
// "*"s, each "*" standing for any run of characters. With only "*" as a
// wildcard, taking each middle piece at its first place is never wrong,
// so this is linear in len(s) per piece, never exponential.
func glob(pieces []string, s string) bool {
	if len(pieces) == 1 {
		return s == pieces[0]
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	s = s[len(first) : len(s)-len(last)]
	for _, mid := range pieces[1 : len(pieces)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return true
}

// best is the literal length of the most specific pattern that path
// matches, and whether any does.
func (ps *patterns) best(req *Request, path string) (int, bool) {
	if ps.fold && len(ps.list) > 0 {
		path = req.fold(path)
	}
	var segs []string
	if ps.globs {
		segs = req.segments(path)
	}
	best, ok := 0, false
	for i := range ps.list {
		if p := &ps.list[i]; p.match(path, segs) && (!ok || p.literal > best) {
			best, ok = p.literal, true
		}
	}
	return best, ok
}

// foldCase maps each rune of s to the smallest rune of its Unicode case
// folding orbit (K, k and the Kelvin sign all become K), so two strings
// are equal in fold form exactly when they match rune by rune under
// simple case folding. Bytes that are not UTF-8 are kept as they are.
func foldCase(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			// The smallest of an ASCII letter's orbit is its capital
			// (the Kelvin sign and the long s are larger).
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[i])
			i++
			continue
		}
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b = utf8.AppendRune(b, least)
		i += n
	}
	return string(b)
}
