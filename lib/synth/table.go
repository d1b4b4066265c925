package synth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// blockTable remembers, for every distinct hash_id, how it was first used:
// at the full block size, or as the last block of its first row (whose
// size the row record keeps), and that row's line. It is what the "one
// hash_id, one block size" rule needs. A hash_id costs one 12-byte slot at
// a load between 0.82 and 0.9 (at most 14.7 bytes), and each row that
// brings new hash_ids one 8-byte record: under 16 bytes per hash_id when
// such rows bring 8 or more (Mooncake rows bring about 20), 23 at worst
// (one new hash_id per row). A Go map of the same facts took about 90.
//
// The slots form an ordered linear-probing table ("Robin Hood" hashing
// with a monotone hash): the home of key h among n slots is h*n/2^64, and
// the occupied slots hold their keys in increasing order, each at
// max(home, previous slot + 1). Lookups stop at the first key not below
// the one sought. Because homes only move up when n grows, the table grows
// in place by a tenth at a time (see grow), in a region that mremap
// extends without copying, so neither a load factor of one half nor a
// second copy during growth is ever paid for.
//
// Slot layout (12 bytes, little-endian): key u64 = mix(hash_id), a
// bijection, so keys spread evenly whatever the ids are; val u32 =
// row ordinal << 1 | last, with ordinals from 1 (val 0 marks a free slot).
type blockTable struct {
	block int // the full block size, in tokens
	mem   region
	n     int // home range: slots [0, n) are homes, [n, slots) a spill tail
	slots int
	count int
	rows  [][]uint64 // row ordinal-1 → line<<20 | lastSize-1, in chunks
}

const (
	slotSize    = 12
	minSlots    = 1 << 10
	maxLoadNum  = 9 // grow past a load of 9/10 ...
	maxLoadDen  = 10
	rowChunk    = 1 << 10
	lineBits    = 44
	sizeBits    = 20 // block sizes are at most 1<<20 tokens (see New)
	maxOrdinals = 1<<31 - 1
)

// tail is the spill area after the n homes: the last clusters run past
// the end instead of wrapping around, which would break the order.
func tail(n int) int { return 256 + n/1024 }

// mix is the 64-bit finalizer of MurmurHash3, a bijection (each step is
// invertible), so distinct hash_ids have distinct keys.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func (t *blockTable) home(h uint64, n int) int {
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

func (t *blockTable) key(i int) uint64 { return binary.LittleEndian.Uint64(t.mem.b[i*slotSize:]) }
func (t *blockTable) val(i int) uint32 { return binary.LittleEndian.Uint32(t.mem.b[i*slotSize+8:]) }

func (t *blockTable) put(i int, h uint64, v uint32) {
	binary.LittleEndian.PutUint64(t.mem.b[i*slotSize:], h)
	binary.LittleEndian.PutUint32(t.mem.b[i*slotSize+8:], v)
}

// find returns the slot holding key h, or the slot where it belongs.
func (t *blockTable) find(h uint64) (int, bool) {
	i := t.home(h, t.n)
	for ; i < t.slots; i++ {
		if t.val(i) == 0 {
			return i, false
		}
		if k := t.key(i); k >= h {
			return i, k == h
		}
	}
	return i, false
}

// rowRef is the row being synthesized: its line, the size of its last
// block, and its ordinal once one of its hash_ids was new.
type rowRef struct {
	line     int64
	lastSize int
	ord      uint32
}

// use records that hash_id id is used by row r (atLast: as its last
// block) and returns the size and line of the id's first use, r's own when
// the id is new.
func (t *blockTable) use(id uint64, atLast bool, r *rowRef) (size int, line int64, err error) {
	h := mix(id)
	if t.mem.b != nil {
		i, found := t.find(h)
		if found {
			size, line := t.first(t.val(i))
			return size, line, nil
		}
	}
	if r.ord == 0 {
		if r.ord, err = t.addRow(r.line, r.lastSize); err != nil {
			return 0, 0, err
		}
	}
	v := r.ord << 1
	size = t.block
	if atLast {
		v |= 1
		size = r.lastSize
	}
	if err := t.insert(h, v); err != nil {
		return 0, 0, err
	}
	return size, r.line, nil
}

// first decodes a slot's value into the block size and line of the first use.
func (t *blockTable) first(v uint32) (size int, line int64) {
	ord := int(v >> 1)
	rec := t.rows[(ord-1)/rowChunk][(ord-1)%rowChunk]
	line = int64(rec >> sizeBits)
	size = t.block
	if v&1 != 0 {
		size = int(rec&(1<<sizeBits-1)) + 1
	}
	return size, line
}

func (t *blockTable) addRow(line int64, lastSize int) (uint32, error) {
	n := 0
	if len(t.rows) > 0 {
		n = (len(t.rows)-1)*rowChunk + len(t.rows[len(t.rows)-1])
	}
	switch {
	case n >= maxOrdinals:
		return 0, fmt.Errorf("more than %d rows bring new hash_ids", maxOrdinals)
	case line < 0 || line >= 1<<lineBits:
		return 0, fmt.Errorf("line %d is beyond the hash_id table's %d-bit line numbers", line, lineBits)
	case lastSize < 1 || lastSize > 1<<sizeBits:
		return 0, fmt.Errorf("block size %d out of range", lastSize)
	}
	if n%rowChunk == 0 {
		t.rows = append(t.rows, make([]uint64, 0, rowChunk))
	}
	last := &t.rows[len(t.rows)-1]
	*last = append(*last, uint64(line)<<sizeBits|uint64(lastSize-1))
	return uint32(n + 1), nil
}

// insert adds key h, which is not in the table, with value v.
func (t *blockTable) insert(h uint64, v uint32) error {
	if t.mem.b == nil {
		if err := t.resize(minSlots); err != nil {
			return err
		}
	}
	for {
		if (t.count+1)*maxLoadDen > t.n*maxLoadNum {
			if err := t.grow(); err != nil {
				return err
			}
		}
		i, _ := t.find(h)
		e := i // the first free slot at or after i takes the shift
		for e < t.slots && t.val(e) != 0 {
			e++
		}
		if e < t.slots {
			copy(t.mem.b[(i+1)*slotSize:(e+1)*slotSize], t.mem.b[i*slotSize:e*slotSize])
			t.put(i, h, v)
			t.count++
			return nil
		}
		if err := t.grow(); err != nil { // the tail is full
			return err
		}
	}
}

func (t *blockTable) resize(n int) error {
	slots := n + tail(n)
	if slots > (1<<62)/slotSize {
		return errors.New("hash_id table too large")
	}
	if err := t.mem.resize(slots * slotSize); err != nil {
		return fmt.Errorf("hash_id table of %d slots: %w", slots, err)
	}
	t.n, t.slots = n, slots
	return nil
}

// grow adds a tenth to the homes, in place (the load falls from 0.9 to
// 0.82, so a slot costs at most 14.7 bytes per hash_id). The old slots are first moved
// to the end of the larger region, then written back from the front in
// order, each at max(new home, previous + 1). The write position never
// passes the read position: a key's new home exceeds its old one by at
// most the growth of n, which the move to the end leaves in front of it.
func (t *blockTable) grow() error {
	oldSlots := t.slots
	if err := t.resize(t.n + t.n/10); err != nil {
		return err
	}
	b := t.mem.b
	shift := t.slots - oldSlots
	copy(b[shift*slotSize:t.slots*slotSize], b[:oldSlots*slotSize])
	w := -1 // the last slot written
	for r := shift; r < t.slots; r++ {
		v := t.val(r)
		if v == 0 {
			continue
		}
		h := t.key(r)
		q := max(t.home(h, t.n), w+1)
		clear(b[(w+1)*slotSize : q*slotSize])
		t.put(q, h, v)
		w = q
	}
	clear(b[(w+1)*slotSize : t.slots*slotSize])
	return nil
}

func (t *blockTable) free() {
	t.mem.free()
	t.rows = nil
}

// bytes returns the memory the table holds: its slots and its row records.
func (t *blockTable) bytes() int {
	return len(t.mem.b) + len(t.rows)*rowChunk*8
}
