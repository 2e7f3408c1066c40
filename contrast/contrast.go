// Package contrast reads CSS hex colours and measures them against WCAG
// 2.2's contrast ratio (success criteria 1.4.3 and 1.4.11), so a room's
// branding is checked when it is loaded and the page's text colour can be
// chosen to stay readable on whatever colour the operator picked.
package contrast

import (
	"math"
	"strconv"
)

// Colour is an sRGB colour, 8 bits a channel.
type Colour struct{ R, G, B uint8 }

// The two text colours a page may pick between.
var (
	Black = Colour{0, 0, 0}
	White = Colour{255, 255, 255}
)

// The ratios WCAG 2.2 AA asks for: text (1.4.3), and user interface
// components and graphics such as a progress bar or a focus ring (1.4.11).
const (
	TextRatio = 4.5
	UIRatio   = 3.0
)

// Parse reads "#rgb" or "#rrggbb" (either case).
func Parse(s string) (Colour, bool) {
	if len(s) != 4 && len(s) != 7 || s[0] != '#' {
		return Colour{}, false
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return Colour{}, false
	}
	if len(s) == 4 {
		return Colour{uint8(v >> 8 & 15 * 17), uint8(v >> 4 & 15 * 17), uint8(v & 15 * 17)}, true
	}
	return Colour{uint8(v >> 16), uint8(v >> 8), uint8(v)}, true
}

// Hex writes c as "#rrggbb".
func (c Colour) Hex() string {
	const digits = "0123456789abcdef"
	return string([]byte{'#', digits[c.R>>4], digits[c.R&15], digits[c.G>>4], digits[c.G&15], digits[c.B>>4], digits[c.B&15]})
}

// luminance is c's relative luminance (WCAG 2.2, "relative luminance").
func (c Colour) luminance() float64 {
	return 0.2126*linear(c.R) + 0.7152*linear(c.G) + 0.0722*linear(c.B)
}

func linear(v uint8) float64 {
	s := float64(v) / 255
	if s <= 0.04045 {
		return s / 12.92
	}
	return math.Pow((s+0.055)/1.055, 2.4)
}

// Ratio is the contrast ratio of a and b, from 1 to 21.
func Ratio(a, b Colour) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// On returns black or white, whichever contrasts more with background:
// one of them always reaches at least 4.58:1, so text in it passes
// TextRatio on any background.
func On(background Colour) Colour {
	if Ratio(Black, background) >= Ratio(White, background) {
		return Black
	}
	return White
}
