//go:build !linux

package fastlyhost

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is nil off Linux: wazero's own slices.
var memoryAllocator experimental.MemoryAllocator
