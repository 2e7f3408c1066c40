package fastlyhost

// Wasmtime, and so Viceroy, starts an instance's memory as a copy-on-write
// mapping of an image of its initial contents (Config::memory_init_cow, on
// by default; Viceroy's configure_wasmtime leaves it on): no data segment
// is copied at instantiation, and a page is copied only when the guest
// first writes to it. Copying the segments into every instance instead
// makes a sandbox's start cost grow with the module's data (milliseconds
// for the Go build's), which Viceroy's does not. So on Linux the host does
// as Wasmtime does: splitMemoryImage takes the active data segments out of
// the module as one image, and each instance's memory maps it (memory_linux.go).

// imagePage is the granularity of a memory image: the host's page.
const imagePage = 4096

// sectionMemory is the memory section's id.
const sectionMemory = 5

// splitMemoryImage returns wasm without its data, and the initial memory
// its data segments wrote, rounded up to whole pages. A module with a data
// count section keeps each segment, empty and at its offset, so that the
// section still counts them; others keep none. It returns wasm itself and a nil image when the data
// cannot be taken out safely: a segment that is passive, not in memory 0 or
// not at a constant offset, a memory the module imports rather than
// defines, or a segment past the initial memory (instantiation must then
// fail as it would have).
func splitMemoryImage(wasm []byte) ([]byte, []byte) {
	if len(wasm) < 8 {
		return wasm, nil
	}
	var (
		initial  uint64 // bytes of memory 0 at instantiation
		memory   bool
		segments []dataSegment
		dataAt   = -1 // offset of the data section's id byte in wasm
		dataEnd  int
		counted  bool // a data count section
	)
	for i := 8; i < len(wasm); {
		id := wasm[i]
		size, n, err := readULEB(wasm[i+1:])
		if err != nil || i+1+n+int(size) > len(wasm) {
			return wasm, nil
		}
		body := wasm[i+1+n : i+1+n+int(size)]
		next := i + 1 + n + int(size)
		switch id {
		case sectionMemory:
			pages, ok := initialPages(body)
			if !ok {
				return wasm, nil
			}
			initial, memory = pages*65536, true
		case sectionData:
			if segments, err = readDataSection(body); err != nil {
				return wasm, nil
			}
			dataAt, dataEnd = i, next
		case sectionDataCount:
			counted = true
		}
		i = next
	}
	if !memory || dataAt < 0 || len(segments) == 0 {
		return wasm, nil
	}
	var end uint64
	for _, s := range segments {
		end = max(end, uint64(s.offset)+uint64(len(s.data)))
	}
	if end > initial || end == 0 {
		return wasm, nil
	}
	image := make([]byte, (end+imagePage-1)/imagePage*imagePage)
	var emptied []dataSegment
	for _, s := range segments {
		copy(image[s.offset:], s.data)
		if counted {
			emptied = append(emptied, dataSegment{offset: s.offset})
		}
	}
	body := writeDataSection(emptied)
	out := make([]byte, 0, len(wasm)-(dataEnd-dataAt)+len(body)+6)
	out = append(out, wasm[:dataAt]...)
	out = append(out, sectionData)
	out = appendULEB(out, uint64(len(body)))
	out = append(out, body...)
	out = append(out, wasm[dataEnd:]...)
	return out, image
}

// initialPages reads the memory section's one memory: its initial size in
// 64 KiB pages.
func initialPages(body []byte) (uint64, bool) {
	count, n, err := readULEB(body)
	if err != nil || count != 1 || len(body) <= n {
		return 0, false
	}
	switch body[n] { // limits: 0 min, 1 min max; others (64-bit, shared) are not ours
	case 0, 1:
	default:
		return 0, false
	}
	pages, _, err := readULEB(body[n+1:])
	return pages, err == nil
}
