//go:build linux

package fastlyhost

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// Every request gets a fresh instance, and a Go guest grows its memory
// several times while it starts: backed by Go slices, each growth copies
// the whole memory and leaves garbage for the collector. Reserving the
// instance's whole memory limit as one anonymous mapping makes growth free
// (pages the guest never touches cost nothing) and returns the memory to
// the system when the instance closes.

// mmapAllocator is an experimental.MemoryAllocator of mapped memories.
type mmapAllocator struct{}

// Allocate implements experimental.MemoryAllocator.
func (mmapAllocator) Allocate(capacity, max uint64) experimental.LinearMemory {
	buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return &sliceMemory{}
	}
	// Instantiation writes the initial memory at once: faulting its pages
	// in one call is cheaper than one fault per page. Kernels before 5.14
	// refuse the advice, which costs nothing.
	syscall.Madvise(buf[:capacity], madvPopulateWrite)
	return &mappedMemory{buf: buf}
}

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE.
const madvPopulateWrite = 23

// mappedMemory is one instance's memory: a fixed reservation whose first
// bytes are in use.
type mappedMemory struct{ buf []byte }

// Reallocate implements experimental.LinearMemory.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size]
}

// Free implements experimental.LinearMemory.
func (m *mappedMemory) Free() {
	if m.buf != nil {
		syscall.Munmap(m.buf)
		m.buf = nil
	}
}

// sliceMemory is the fallback when a mapping fails: Go slices, grown by
// copying, as wazero does by default.
type sliceMemory struct{ buf []byte }

// Reallocate implements experimental.LinearMemory.
func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		grown := make([]byte, size, size+size/2)
		copy(grown, m.buf)
		m.buf = grown
	}
	m.buf = m.buf[:size]
	return m.buf
}

// Free implements experimental.LinearMemory.
func (m *sliceMemory) Free() { m.buf = nil }

// memoryAllocator is the allocator instances use.
var memoryAllocator experimental.MemoryAllocator = mmapAllocator{}
