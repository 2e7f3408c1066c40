package fastlyhost

import (
	"bytes"
	"testing"
)

// padded is b with zeros up to a whole number of image pages.
func padded(b []byte) []byte {
	return append(bytes.Clone(b), make([]byte, (imagePage-len(b)%imagePage)%imagePage)...)
}

// checkSplit checks that stripped and img are wasm's data taken out: the
// image is the memory wasm's segments leave, and stripped keeps no data: no
// segment or, where a data count section counts them, every segment, empty,
// at its offset.
func checkSplit(t *testing.T, wasm, stripped, img []byte) {
	t.Helper()
	if img == nil {
		t.Fatal("no image")
	}
	if want := padded(image(t, wasm)); !bytes.Equal(img, want) {
		t.Fatalf("image of %d bytes differs from the %d the segments leave", len(img), len(want))
	}
	before, _ := readDataSection(dataSection(t, wasm))
	after, err := readDataSection(dataSection(t, stripped))
	want := 0
	if hasSection(t, wasm, sectionDataCount) {
		want = len(before)
	}
	if err != nil || len(after) != want {
		t.Fatalf("%d segments became %d, want %d (%v)", len(before), len(after), want, err)
	}
	for i := range after {
		if len(after[i].data) != 0 || after[i].offset != before[i].offset {
			t.Fatalf("segment %d: %d bytes at %d, want 0 at %d", i, len(after[i].data), after[i].offset, before[i].offset)
		}
	}
}

func TestSplitMemoryImage(t *testing.T) {
	tests := []struct {
		name     string
		segments []dataSegment
	}{
		{"one", []dataSegment{{0, []byte("ab")}}},
		{"later overwrites earlier", []dataSegment{{10, []byte("xxxx")}, {12, []byte("yy")}, {0, []byte("z")}}},
		{"out of order", []dataSegment{{200, []byte("late")}, {5, []byte("early")}}},
		{"empty segment", []dataSegment{{7, nil}, {9, []byte("q")}}},
		{"across pages", []dataSegment{{imagePage - 1, []byte("spans")}}},
		{"to the end of memory", []dataSegment{{65536 - 3, []byte("end")}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wasm := module(tc.segments...)
			stripped, img := splitMemoryImage(wasm)
			checkSplit(t, wasm, stripped, img)
			counted := append(module(tc.segments...), sectionDataCount, 1, byte(len(tc.segments)))
			stripped, img = splitMemoryImage(counted)
			checkSplit(t, counted, stripped, img)
		})
	}
}

func TestSplitLeavesUnsafeModulesAlone(t *testing.T) {
	passive := []byte("\x00asm\x01\x00\x00\x00")
	passive = append(passive, 5, 3, 1, 0, 1)
	passive = append(passive, sectionData, 5, 1, 1, 2, 'h', 'i') // flags 1: a passive segment
	noMemory := []byte("\x00asm\x01\x00\x00\x00")                // as when the memory is imported
	noMemory = append(noMemory, sectionData, 7, 1, 0, 0x41, 0, 0x0b, 1, 'a')
	for name, wasm := range map[string][]byte{
		"passive segment":     passive,
		"no memory section":   noMemory,
		"past initial memory": module(dataSegment{65536 - 1, []byte("ab")}),
		"no data":             module(),
		"truncated":           module(dataSegment{0, []byte("abc")})[:20],
		"not wasm":            []byte("hello"),
	} {
		got, img := splitMemoryImage(wasm)
		if img != nil || !bytes.Equal(got, wasm) {
			t.Errorf("%s: module was split", name)
		}
	}
}

// TestSplitTheService takes the real service's data out: Go's module (tens
// of thousands of segments) and TinyGo's (a data count section, which must
// still count the segments) alike.
func TestSplitTheService(t *testing.T) {
	wasm := serviceWasm(t)
	stripped, img := splitMemoryImage(wasm)
	checkSplit(t, wasm, stripped, img)
	t.Logf("module %d -> %d bytes, image %d bytes", len(wasm), len(stripped), len(img))
}
