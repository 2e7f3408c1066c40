//go:build !linux

package fastlyhost

import "github.com/tetratelabs/wazero/experimental"

// moduleMemory returns the module with its segments merged and a nil
// allocator off Linux: wazero's own slices, data copied at instantiation.
func moduleMemory(wasm []byte) (module []byte, alloc experimental.MemoryAllocator, release func()) {
	return mergeDataSegments(wasm), nil, func() {}
}
