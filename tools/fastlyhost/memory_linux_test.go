//go:build linux

package fastlyhost

import (
	"bytes"
	"testing"
)

// TestImageMemoriesArePrivate checks the copy-on-write memories: each
// starts as the image, grows, and keeps its writes to itself.
func TestImageMemoriesArePrivate(t *testing.T) {
	wasm := module(dataSegment{0, []byte("hello")}, dataSegment{imagePage + 2, []byte("world")})
	_, alloc, release := moduleMemory(wasm)
	defer release()
	if _, ok := alloc.(imageAllocator); !ok {
		t.Fatalf("allocator %T, want an image", alloc)
	}
	const page = 65536
	first := alloc.Allocate(page, 4*page)
	defer first.Free()
	mem := first.Reallocate(page)
	want := make([]byte, page)
	copy(want, "hello")
	copy(want[imagePage+2:], "world")
	if !bytes.Equal(mem, want) {
		t.Fatal("a new memory is not the image")
	}
	copy(mem, "HELLO")
	mem[page-1] = 1
	grown := first.Reallocate(3 * page)
	if !bytes.Equal(grown[:5], []byte("HELLO")) || grown[page-1] != 1 || grown[2*page] != 0 {
		t.Fatal("growing lost the memory's contents")
	}
	second := alloc.Allocate(page, 4*page)
	defer second.Free()
	if !bytes.Equal(second.Reallocate(page), want) {
		t.Fatal("one memory's writes reached another")
	}
}

// TestImageFallbackMemoryStartsAsTheImage: when a mapping fails, the
// memory is a slice that reads the image from its file.
func TestImageFallbackMemoryStartsAsTheImage(t *testing.T) {
	_, alloc, release := moduleMemory(module(dataSegment{3, []byte("data")}))
	defer release()
	m := &sliceMemory{image: alloc.(imageAllocator)}
	got := m.Reallocate(65536)
	if len(got) != 65536 || string(got[3:7]) != "data" || got[0] != 0 || got[7] != 0 {
		t.Fatalf("a fallback memory of %d bytes starts %q, want the image", len(got), got[:8])
	}
}
