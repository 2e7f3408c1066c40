package contrast

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Colour
		ok   bool
	}{
		{"#000", Colour{}, true},
		{"#fff", White, true},
		{"#1D2330", Colour{0x1d, 0x23, 0x30}, true},
		{"#a1b", Colour{0xaa, 0x11, 0xbb}, true},
		{"", Colour{}, false},
		{"fff", Colour{}, false},
		{"#ffff", Colour{}, false},
		{"#ggg", Colour{}, false},
		{"#12345", Colour{}, false},
		{"#1234567", Colour{}, false},
		{"red", Colour{}, false},
		{"#+ff", Colour{}, false},
		{"#f_f", Colour{}, false},
		{"#-12345", Colour{}, false},
	}
	for _, tc := range tests {
		got, ok := Parse(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Parse(%q) = %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if h := (Colour{0x1d, 0x23, 0xf0}).Hex(); h != "#1d23f0" {
		t.Errorf("Hex: %s", h)
	}
}

func TestRatio(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"#000", "#fff", 21},
		{"#fff", "#fff", 1},
		{"#777", "#fff", 4.48}, // the classic near miss
		{"#767676", "#fff", 4.54},
		{"#1d2330", "#fff", 15.6},
	}
	for _, tc := range tests {
		a, _ := Parse(tc.a)
		b, _ := Parse(tc.b)
		if got := Ratio(a, b); math.Abs(got-tc.want) > 0.01*tc.want {
			t.Errorf("Ratio(%s, %s) = %.2f, want %.2f", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestOnAlwaysReadable(t *testing.T) {
	worst := 21.0
	for r := 0; r < 256; r += 5 {
		for g := 0; g < 256; g += 5 {
			for b := 0; b < 256; b += 5 {
				c := Colour{uint8(r), uint8(g), uint8(b)}
				worst = math.Min(worst, Ratio(On(c), c))
			}
		}
	}
	if worst < TextRatio {
		t.Errorf("the worst background gives %.2f:1", worst)
	}
}
