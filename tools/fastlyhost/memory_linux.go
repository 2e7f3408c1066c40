//go:build linux

package fastlyhost

import (
	"syscall"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
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
// copying, as wazero does by default. A module whose data is an image reads
// it into its first slice.
type sliceMemory struct {
	buf   []byte
	image imageAllocator
}

// Reallocate implements experimental.LinearMemory.
func (m *sliceMemory) Reallocate(size uint64) []byte {
	if m.buf == nil && m.image.size > 0 {
		m.buf = make([]byte, max(size, uint64(m.image.size)))
		if n, err := unix.Pread(m.image.fd, m.buf[:m.image.size], 0); err != nil || n != m.image.size {
			return nil
		}
	}
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

// moduleMemory returns the module to compile and the allocator its
// instances' memories come from: when its data can be made an image
// (splitMemoryImage) and the image put in a memory file, the module
// without its data and an allocator that maps the image copy-on-write, as
// Wasmtime does; else the module with its segments merged and plain
// mapped memories. release closes the image's file, once no instance uses
// it.
func moduleMemory(wasm []byte) (module []byte, alloc experimental.MemoryAllocator, release func()) {
	stripped, image := splitMemoryImage(wasm)
	if image != nil {
		if fd, err := imageFile(image); err == nil {
			return stripped, imageAllocator{fd: fd, size: len(image)}, func() { unix.Close(fd) }
		}
	}
	return mergeDataSegments(wasm), mmapAllocator{}, func() {}
}

// imageFile is a memory file holding image.
func imageFile(image []byte) (int, error) {
	fd, err := unix.MemfdCreate("fastlyhost-memory-image", unix.MFD_CLOEXEC)
	if err != nil {
		return -1, err
	}
	for b := image; len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			unix.Close(fd)
			return -1, err
		}
		b = b[n:]
	}
	return fd, nil
}

// imageAllocator is an experimental.MemoryAllocator of mapped memories whose
// first size bytes are a private, copy-on-write mapping of the image in fd.
type imageAllocator struct {
	fd   int
	size int
}

// Allocate implements experimental.MemoryAllocator. The image lies within
// the initial memory (splitMemoryImage), so within capacity.
func (a imageAllocator) Allocate(capacity, max uint64) experimental.LinearMemory {
	buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil || uint64(a.size) > capacity {
		if err == nil {
			syscall.Munmap(buf)
		}
		return &sliceMemory{image: a}
	}
	if _, err := unix.MmapPtr(a.fd, 0, unsafe.Pointer(&buf[0]), uintptr(a.size),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
		syscall.Munmap(buf)
		return &sliceMemory{image: a}
	}
	// Fault in the rest of the initial memory at once, as mmapAllocator
	// does; the image's pages are faulted as the guest touches them.
	syscall.Madvise(buf[a.size:capacity], madvPopulateWrite)
	return &mappedMemory{buf: buf}
}
