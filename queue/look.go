package queue

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/edgequeue/waitingroom/contrast"
	"github.com/edgequeue/waitingroom/locale"
)

// Look is how a room's visitor pages look and speak, set per room in its
// config without writing a template: the language a visitor gets when
// their browser asks for none the room speaks, the branding, and the
// operator's own words per language. Its JSON fields are the room's.
type Look struct {
	// Language is the room's default language (en, de, fr, es, ja or pt),
	// used when Accept-Language names none of them.
	Language string `json:"language"`
	// Title heads the queue page; empty keeps the built-in heading.
	Title string `json:"title"`
	// Message is the operator's note shown on the queue page.
	Message string `json:"message"`
	// LogoURL is an image the operator serves (https:// or a path on the
	// site, under a bypass rule), shown above the title.
	LogoURL string `json:"logo_url"`
	// BrandColor and BackgroundColor are CSS hex colours (#rgb or
	// #rrggbb) for the page's accents and background.
	BrandColor      string `json:"brand_color"`
	BackgroundColor string `json:"background_color"`
	// SupportLink is where a visitor can ask for help (https:// or
	// mailto:).
	SupportLink string `json:"support_link"`
	// Texts are the operator's words per language: Texts["de"]["title"]
	// replaces Title for visitors reading German. The keys are "title",
	// "message" and the built-in texts locale.OverrideNames lists.
	Texts map[string]map[string]string `json:"texts"`
}

// The colours of a page whose room sets none: the page's own dark text
// on white, and a blue that keeps 5:1 against white for the progress bar
// and the brand band.
const (
	DefaultBackground = "#ffffff"
	DefaultBrand      = "#1a56db"
)

// Bounds on the operator's words: a title is a line, a message a short
// paragraph; a page stays a few kilobytes.
const (
	maxTitle = 120
	maxText  = 1000
	maxURL   = 2000
)

// validate checks every field, naming the first bad one.
func (l *Look) validate() error {
	if l.Language != "" && !locale.Supported(l.Language) {
		return fmt.Errorf("language: must be one of %s, got %q", strings.Join(locale.Languages(), ", "), l.Language)
	}
	if err := checkText(l.Title, maxTitle); err != nil {
		return fmt.Errorf("title: %v", err)
	}
	if err := checkText(l.Message, maxText); err != nil {
		return fmt.Errorf("message: %v", err)
	}
	if err := checkLogo(l.LogoURL); err != nil {
		return fmt.Errorf("logo_url: %v", err)
	}
	if err := checkSupport(l.SupportLink); err != nil {
		return fmt.Errorf("support_link: %v", err)
	}
	if err := l.checkColours(); err != nil {
		return err
	}
	return l.checkTexts()
}

// checkText refuses text too long for its place or holding control
// characters (a line break in a title, or an escape sequence, shows as
// garbage or splits a log line) or invalid UTF-8.
func checkText(s string, limit int) error {
	if n := utf8.RuneCountInString(s); n > limit {
		return fmt.Errorf("%d characters, the limit is %d", n, limit)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%q is not valid UTF-8", s)
	}
	for _, c := range s {
		if c < ' ' || c == 0x7f || c >= 0x80 && c < 0xa0 {
			return fmt.Errorf("%q holds a control character", s)
		}
	}
	return nil
}

// checkLogo accepts an https:// URL with a host, or a path on the site
// (not //host, which a browser reads as another site over any scheme):
// the page's Content-Security-Policy allows images from exactly these.
func checkLogo(s string) error {
	switch {
	case s == "":
		return nil
	case strings.HasPrefix(s, "https://") && len(s) > len("https://") && s[len("https://")] != '/':
	case strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "/\\"):
	default:
		return fmt.Errorf("%q must be an https:// URL or a path starting with /", s)
	}
	return checkURL(s)
}

// checkSupport accepts an https:// URL with a host, or a mailto: address.
func checkSupport(s string) error {
	switch {
	case s == "":
		return nil
	case strings.HasPrefix(s, "https://") && len(s) > len("https://") && s[len("https://")] != '/':
	case strings.HasPrefix(s, "mailto:") && strings.Contains(s, "@"):
	default:
		return fmt.Errorf("%q must be an https:// URL or a mailto: address", s)
	}
	return checkURL(s)
}

// checkURL refuses a URL too long, or holding characters a URL must
// escape (spaces, quotes, angle brackets, backslashes, controls).
func checkURL(s string) error {
	if len(s) > maxURL {
		return fmt.Errorf("%d bytes, the limit is %d", len(s), maxURL)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`"'<>\`+"`{}|^", c) >= 0 {
			return fmt.Errorf("%q holds %q, which a URL must percent-encode", s, c)
		}
	}
	return nil
}

// checkColours reads both colours and refuses a pair the page cannot make
// accessible: text is picked black or white against the background (one
// always reaches 4.5:1), but the brand colour fills the progress bar and
// must stand out from the background by 3:1 (WCAG 2.2, 1.4.11).
func (l *Look) checkColours() error {
	for _, c := range []struct{ field, value string }{{"brand_color", l.BrandColor}, {"background_color", l.BackgroundColor}} {
		if _, ok := contrast.Parse(c.value); c.value != "" && !ok {
			return fmt.Errorf("%s: %q must be a hex colour, #rgb or #rrggbb", c.field, c.value)
		}
	}
	bg, brand, _, _ := l.Colours()
	if r := contrast.Ratio(bg, brand); r < contrast.UIRatio {
		return fmt.Errorf("brand_color: %s against background_color %s has a contrast of %.2f:1; the progress bar needs at least %g:1 (WCAG 2.2, 1.4.11): darken or lighten one of them",
			brand.Hex(), bg.Hex(), r, contrast.UIRatio)
	}
	return nil
}

// Colours are the page's colours: the background, the brand colour, and
// the text colours picked for reading on each (black or white, whichever
// contrasts more). Unset or unreadable colours are the defaults.
func (l *Look) Colours() (background, brand, text, onBrand contrast.Colour) {
	background, ok := contrast.Parse(l.BackgroundColor)
	if !ok {
		background, _ = contrast.Parse(DefaultBackground)
	}
	brand, ok = contrast.Parse(l.BrandColor)
	if !ok {
		brand, _ = contrast.Parse(DefaultBrand)
	}
	return background, brand, contrast.On(background), contrast.On(brand)
}

// checkTexts checks the operator's words per language: languages the
// pages speak, keys that may be overridden, bounded lengths.
func (l *Look) checkTexts() error {
	for lang, texts := range l.Texts {
		if !locale.Supported(lang) {
			return fmt.Errorf("texts: %q is not a language the pages speak (%s)", lang, strings.Join(locale.Languages(), ", "))
		}
		for key, text := range texts {
			limit := maxText
			if key == "title" {
				limit = maxTitle
			} else if _, ok := locale.OverrideKey(key); !ok && key != "message" {
				return fmt.Errorf("texts.%s: %q is not a text the pages let you replace; use one of message, %s",
					lang, key, strings.Join(locale.OverrideNames(), ", "))
			}
			if err := checkText(text, limit); err != nil {
				return fmt.Errorf("texts.%s.%s: %v", lang, key, err)
			}
		}
	}
	return nil
}

// Text is what the pages say for name ("title", "message", or a name
// locale.OverrideNames lists) in lang: the operator's words for that
// language, else for title and message the room's own, else the built-in
// text ("" for a message).
func (l *Look) Text(lang, name string) string {
	if t, ok := l.Texts[lang][name]; ok && t != "" {
		return t
	}
	switch name {
	case "title":
		if l.Title != "" {
			return l.Title
		}
	case "message":
		return l.Message
	}
	if k, ok := locale.OverrideKey(name); ok {
		return locale.Text(lang, k)
	}
	return ""
}
