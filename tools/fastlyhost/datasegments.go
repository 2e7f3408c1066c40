package fastlyhost

import (
	"bytes"
	"cmp"
	"errors"
	"slices"
)

// Go's linker writes a module's initial memory as tens of thousands of
// small active data segments (bin/main.wasm has about 78,000), and a
// runtime applies them one by one to every new instance: for a host that
// instantiates once per request, as Compute does, that is milliseconds of
// every request. mergeDataSegments rewrites the data section as a few
// large segments that leave memory byte for byte as the original would.
// It leaves a module alone when any segment is not an active segment of
// memory 0 at a constant offset, or when a data count section exists (only
// passive segments and bulk memory instructions need one, and they refer
// to segments by index). TinyGo's module has one, and only a few hundred
// segments, so it runs as built.

// mergeGap is the longest run of untouched memory a merged segment spans:
// a longer gap starts a new segment rather than copy zeros into place.
const mergeGap = 4096

const (
	sectionData      = 11
	sectionDataCount = 12
)

var errNotMergeable = errors.New("data section not mergeable")

type dataSegment struct {
	offset uint32
	data   []byte
}

// mergeDataSegments returns wasm with its data segments merged, or wasm
// itself when it cannot be merged safely.
func mergeDataSegments(wasm []byte) []byte {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return wasm
	}
	var out []byte
	out = append(out, wasm[:8]...)
	merged := false
	for i := 8; i < len(wasm); {
		id := wasm[i]
		size, n, err := readULEB(wasm[i+1:])
		if err != nil || i+1+n+int(size) > len(wasm) {
			return wasm
		}
		body := wasm[i+1+n : i+1+n+int(size)]
		next := i + 1 + n + int(size)
		switch id {
		case sectionDataCount:
			return wasm
		case sectionData:
			segments, err := readDataSection(body)
			if err != nil {
				return wasm
			}
			body = writeDataSection(coalesce(segments))
			merged = true
		}
		out = append(out, id)
		out = appendULEB(out, uint64(len(body)))
		out = append(out, body...)
		i = next
	}
	if !merged {
		return wasm
	}
	return out
}

func readDataSection(b []byte) ([]dataSegment, error) {
	count, n, err := readULEB(b)
	if err != nil {
		return nil, err
	}
	b = b[n:]
	segments := make([]dataSegment, 0, count)
	for ; count > 0; count-- {
		// flags 0: active, memory 0, offset expression i32.const k; end.
		if len(b) < 2 || b[0] != 0 || b[1] != 0x41 {
			return nil, errNotMergeable
		}
		offset, n, err := readSLEB32(b[2:])
		if err != nil || offset < 0 || len(b) < 2+n+1 || b[2+n] != 0x0b {
			return nil, errNotMergeable
		}
		b = b[2+n+1:]
		size, n, err := readULEB(b)
		if err != nil || uint64(len(b)-n) < size {
			return nil, errNotMergeable
		}
		segments = append(segments, dataSegment{offset: uint32(offset), data: b[n : n+int(size)]})
		b = b[n+int(size):]
	}
	if len(b) != 0 {
		return nil, errNotMergeable
	}
	return segments, nil
}

// coalesce lays the segments, in order (a later one overwrites an earlier
// one where they overlap, as instantiation does), into runs with gaps of at
// most mergeGap.
func coalesce(segments []dataSegment) []dataSegment {
	type span struct{ start, end uint64 }
	// Cover the written ranges with spans, merging across small gaps.
	sorted := make([]span, 0, len(segments))
	for _, s := range segments {
		if len(s.data) > 0 {
			sorted = append(sorted, span{uint64(s.offset), uint64(s.offset) + uint64(len(s.data))})
		}
	}
	slices.SortFunc(sorted, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var spans []span
	for _, s := range sorted {
		if last := len(spans) - 1; last >= 0 && s.start <= spans[last].end+mergeGap {
			spans[last].end = max(spans[last].end, s.end)
			continue
		}
		spans = append(spans, s)
	}
	out := make([]dataSegment, len(spans))
	for i, sp := range spans {
		out[i] = dataSegment{offset: uint32(sp.start), data: make([]byte, sp.end-sp.start)}
	}
	for _, s := range segments {
		if len(s.data) == 0 {
			continue
		}
		// The span holding s: the last whose start is at or before it.
		lo, hi := 0, len(out)
		for lo+1 < hi {
			mid := (lo + hi) / 2
			if out[mid].offset <= s.offset {
				lo = mid
			} else {
				hi = mid
			}
		}
		copy(out[lo].data[s.offset-out[lo].offset:], s.data)
	}
	return out
}

func writeDataSection(segments []dataSegment) []byte {
	var b []byte
	b = appendULEB(b, uint64(len(segments)))
	for _, s := range segments {
		b = append(b, 0, 0x41)
		b = appendSLEB32(b, int32(s.offset))
		b = append(b, 0x0b)
		b = appendULEB(b, uint64(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}

var errLEB = errors.New("bad LEB128")

func readULEB(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errLEB
}

func readSLEB32(b []byte) (int32, int, error) {
	var v int64
	for i := 0; i < len(b) && i < 5; i++ {
		v |= int64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			if shift := 7 * (i + 1); shift < 64 && b[i]&0x40 != 0 {
				v |= -1 << shift
			}
			return int32(v), i + 1, nil
		}
	}
	return 0, 0, errLEB
}

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendSLEB32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
