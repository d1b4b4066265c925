package store

import (
	"encoding/binary"
	"unsafe"
)

// The bound checks of Open run over millions of values, so they are written
// as branch-free loops over []uint32 and []uint64. On a little-endian host a
// column (8-byte aligned in the file, and the mapping is page-aligned) is
// viewed in place; otherwise, or for an unaligned in-memory image, it is
// decoded in small chunks on the stack. Each kernel only answers "all
// good?"; on failure Open walks the column again slowly to name the first
// bad value and its offset.

var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

const chunk = 512

// view32 returns b as []uint32 without copying when that is possible.
func view32(b []byte) ([]uint32, bool) {
	if !hostLittleEndian || len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4), true
}

// view64 returns b as []uint64 without copying when that is possible.
func view64(b []byte) ([]uint64, bool) {
	if !hostLittleEndian || len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		return nil, false
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8), true
}

// each32 calls fn with the little-endian uint32s of b, in order, in one or
// more slices.
func each32(b []byte, fn func([]uint32)) {
	if v, ok := view32(b); ok {
		fn(v)
		return
	}
	var buf [chunk]uint32
	for len(b) >= 4 {
		k := min(len(b)/4, chunk)
		for i := range k {
			buf[i] = le.Uint32(b[4*i:])
		}
		fn(buf[:k])
		b = b[4*k:]
	}
}

// runsOK reports whether col ([]u32) never decreases, and returns its last
// value.
func runsOK(col []byte) (ok bool, last uint32) {
	var bad uint64
	started := false
	each32(col, func(v []uint32) {
		if started {
			bad |= uint64(v[0]) - uint64(last)
		}
		started = true
		bad |= nonDecreasing(v)
		last = v[len(v)-1]
	})
	return bad>>32 == 0, last
}

// nonDecreasing returns a value whose high 32 bits are zero exactly when v
// never decreases: a-b computed in 64 bits wraps to ≥ 2^64-2^32 when a < b.
// No branches and no carries, so the loop runs at about 0.4 ns a value.
func nonDecreasing(v []uint32) uint64 {
	if len(v) < 2 {
		return 0
	}
	next, prev := v[1:], v[:len(v)-1]
	prev = prev[:len(next)]
	var bad uint64
	for i, x := range next {
		bad |= uint64(x) - uint64(prev[i])
	}
	return bad
}

// allBelow reports whether every u32 of col is below n.
func allBelow(col []byte, n uint32) bool {
	var m uint32
	each32(col, func(v []uint32) {
		var m0, m1, m2, m3 uint32
		i := 0
		for ; i+4 <= len(v); i += 4 {
			m0 = max(m0, v[i])
			m1 = max(m1, v[i+1])
			m2 = max(m2, v[i+2])
			m3 = max(m3, v[i+3])
		}
		for ; i < len(v); i++ {
			m0 = max(m0, v[i])
		}
		m = max(m, m0, m1, m2, m3)
	})
	return len(col) == 0 || m < n
}

// backToBack reports whether offs ([]u64) and lens ([]u32), n values each,
// describe payloads that start at start and follow each other with no gap
// or overlap, and returns where the last one ends. The sum cannot wrap: at
// most 2^32-1 lengths below 2^32 add up to less than 2^64-2^32.
func backToBack(offs, lens []byte, start uint64) (ok bool, end uint64) {
	o64, ok64 := view64(offs)
	l32, ok32 := view32(lens)
	if !ok64 || !ok32 {
		return backToBackSlow(offs, lens, start)
	}
	l32 = l32[:len(o64)]
	pos := start
	var diff uint64
	for i, off := range o64 {
		diff |= off ^ pos
		pos += uint64(l32[i])
	}
	return diff == 0, pos
}

func backToBackSlow(offs, lens []byte, start uint64) (ok bool, end uint64) {
	pos := start
	for len(offs) >= 8 && len(lens) >= 4 {
		if le.Uint64(offs) != pos {
			return false, pos
		}
		pos += uint64(le.Uint32(lens))
		offs, lens = offs[8:], lens[4:]
	}
	return true, pos
}
