package fastlyhost

import (
	"bytes"
	"testing"
)

// image is the memory a module's data section leaves: each segment copied
// in order.
func image(t *testing.T, wasm []byte) []byte {
	t.Helper()
	segments, err := readDataSection(dataSection(t, wasm))
	if err != nil {
		t.Fatal(err)
	}
	var mem []byte
	for _, s := range segments {
		if end := int(s.offset) + len(s.data); end > len(mem) {
			mem = append(mem, make([]byte, end-len(mem))...)
		}
		copy(mem[s.offset:], s.data)
	}
	return mem
}

// module is a wasm module with one memory and the given data segments.
func module(segments ...dataSegment) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, 5, 3, 1, 0, 1) // memory section: one memory, min 1 page
	data := writeDataSection(segments)
	b = append(b, sectionData)
	b = appendULEB(b, uint64(len(data)))
	return append(b, data...)
}

func TestMergeDataSegments(t *testing.T) {
	tests := []struct {
		name     string
		segments []dataSegment
		want     int // segments after merging
	}{
		{"adjacent", []dataSegment{{0, []byte("ab")}, {2, []byte("cd")}}, 1},
		{"small gap", []dataSegment{{0, []byte("ab")}, {100, []byte("cd")}}, 1},
		{"large gap", []dataSegment{{0, []byte("ab")}, {mergeGap + 10, []byte("cd")}}, 2},
		{"later overwrites earlier", []dataSegment{{10, []byte("xxxx")}, {12, []byte("yy")}, {0, []byte("z")}}, 1},
		{"out of order", []dataSegment{{200, []byte("late")}, {5, []byte("early")}}, 1},
		{"empty segment", []dataSegment{{7, nil}, {9, []byte("q")}}, 1},
		{"large offset", []dataSegment{{1 << 20, []byte("high")}, {300, []byte("low")}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := module(tc.segments...)
			merged := mergeDataSegments(orig)
			if !bytes.Equal(image(t, orig), image(t, merged)) {
				t.Fatal("merged segments leave different memory")
			}
			got, err := readDataSection(dataSection(t, merged))
			if err != nil || len(got) != tc.want {
				t.Fatalf("%d segments (%v), want %d", len(got), err, tc.want)
			}
		})
	}
}

func TestMergeLeavesUnsafeModulesAlone(t *testing.T) {
	passive := []byte("\x00asm\x01\x00\x00\x00")
	passive = append(passive, sectionData, 5, 1, 1, 2, 'h', 'i') // flags 1: a passive segment
	withCount := append(module(dataSegment{0, []byte("a")}), sectionDataCount, 1, 1)
	for name, wasm := range map[string][]byte{
		"passive segment":    passive,
		"data count section": withCount,
		"truncated":          module(dataSegment{0, []byte("abc")})[:20],
		"not wasm":           []byte("hello"),
	} {
		if got := mergeDataSegments(wasm); !bytes.Equal(got, wasm) {
			t.Errorf("%s: module was rewritten", name)
		}
	}
}

// TestMergeTheService merges the real service's segments and checks the
// memory image is unchanged. Go's linker writes tens of thousands of
// segments and no data count section, so its module must shrink to a few;
// TinyGo's (built with bulk memory) has a data count section, so the merge
// must leave it byte for byte alone.
func TestMergeTheService(t *testing.T) {
	wasm := serviceWasm(t)
	merged := mergeDataSegments(wasm)
	before, _ := readDataSection(dataSection(t, wasm))
	after, _ := readDataSection(dataSection(t, merged))
	t.Logf("%d data segments merged into %d; module %d -> %d bytes", len(before), len(after), len(wasm), len(merged))
	if hasSection(t, wasm, sectionDataCount) {
		if !bytes.Equal(merged, wasm) {
			t.Fatal("a module with a data count section was rewritten")
		}
		return
	}
	if len(after) == 0 || len(after) >= len(before) {
		t.Fatalf("%d segments became %d", len(before), len(after))
	}
	if !bytes.Equal(image(t, wasm), image(t, merged)) {
		t.Fatal("merged segments leave different memory")
	}
}

// eachSection calls f with each section's id and body until f returns false.
func eachSection(t *testing.T, wasm []byte, f func(id byte, body []byte) bool) {
	t.Helper()
	for i := 8; i < len(wasm); {
		size, n, err := readULEB(wasm[i+1:])
		if err != nil {
			t.Fatal(err)
		}
		if !f(wasm[i], wasm[i+1+n:i+1+n+int(size)]) {
			return
		}
		i += 1 + n + int(size)
	}
}

func hasSection(t *testing.T, wasm []byte, id byte) bool {
	found := false
	eachSection(t, wasm, func(sid byte, _ []byte) bool {
		found = sid == id
		return !found
	})
	return found
}

func dataSection(t *testing.T, wasm []byte) []byte {
	t.Helper()
	var data []byte
	eachSection(t, wasm, func(id byte, body []byte) bool {
		if id == sectionData {
			data = body
		}
		return data == nil
	})
	if data == nil {
		t.Fatal("no data section")
	}
	return data
}
