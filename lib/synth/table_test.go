package synth

import (
	"math/rand/v2"
	"testing"
)

// checkTable verifies the layout invariant: occupied slots hold their keys
// in increasing order, each at max(home, previous slot + 1), with no slot
// below its home; and count is the number of occupied slots.
func checkTable(t *testing.T, tb *blockTable) {
	t.Helper()
	n, prev, last := 0, -1, uint64(0)
	for i := 0; i < tb.slots; i++ {
		if tb.val(i) == 0 {
			continue
		}
		n++
		k := tb.key(i)
		h := tb.home(k, tb.n)
		if prev >= 0 && k <= last {
			t.Fatalf("slot %d: key %x not above the previous %x", i, k, last)
		}
		if want := max(h, prev+1); i != want {
			t.Fatalf("slot %d: key %x with home %d belongs at %d (previous at %d)", i, k, h, want, prev)
		}
		prev, last = i, k
	}
	if n != tb.count {
		t.Fatalf("%d occupied slots, count %d", n, tb.count)
	}
}

type firstUse struct {
	size int
	line int64
}

// TestBlockTable drives the table and a map with the same uses: dense ids
// (Mooncake numbers its blocks), random 64-bit ids and a mix, through many
// in-place growths, and compares every answer.
func TestBlockTable(t *testing.T) {
	n := 200000
	if testing.Short() || raceEnabled {
		n = 20000
	}
	for _, kind := range []string{"dense", "random", "mixed"} {
		t.Run(kind, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			const B = 512
			tb := &blockTable{block: B}
			defer tb.free()
			ref := map[uint64]firstUse{}
			nextID := uint64(0)
			newID := func() uint64 {
				switch kind {
				case "dense":
					nextID++
					return nextID
				case "random":
					return rng.Uint64()
				}
				if rng.IntN(2) == 0 {
					nextID++
					return nextID
				}
				return rng.Uint64() | 1<<63
			}
			var seen []uint64
			grows, slots := 0, 0
			for line := int64(1); len(ref) < n; line++ {
				r := rowRef{line: line, lastSize: 1 + rng.IntN(B)}
				m := 1 + rng.IntN(30)
				for j := 0; j < m; j++ {
					id := newID()
					if len(seen) > 0 && rng.IntN(3) == 0 {
						id = seen[rng.IntN(len(seen))] // reuse
					}
					atLast := j == m-1
					size, gotLine, err := tb.use(id, atLast, &r)
					if err != nil {
						t.Fatal(err)
					}
					want, ok := ref[id]
					if !ok {
						want = firstUse{B, line}
						if atLast {
							want.size = r.lastSize
						}
						ref[id] = want
						seen = append(seen, id)
					}
					if size != want.size || gotLine != want.line {
						t.Fatalf("line %d: hash_id %d: first use %d tokens on line %d, want %d on line %d", line, id, size, gotLine, want.size, want.line)
					}
				}
				if tb.slots != slots {
					grows, slots = grows+1, tb.slots
					checkTable(t, tb)
				}
			}
			checkTable(t, tb)
			if tb.count != len(ref) {
				t.Errorf("count %d, want %d", tb.count, len(ref))
			}
			for id, want := range ref { // every id is still found after the growths
				i, ok := tb.find(mix(id))
				if !ok {
					t.Fatalf("hash_id %d lost", id)
				}
				if size, line := tb.first(tb.val(i)); size != want.size || line != want.line {
					t.Fatalf("hash_id %d: %d tokens on line %d, want %d on line %d", id, size, line, want.size, want.line)
				}
			}
			t.Logf("%s: %d ids, %d growths, %d slots (load %.2f)", kind, tb.count, grows, tb.slots, float64(tb.count)/float64(tb.n))
		})
	}
}

// TestBlockTableBytes bounds the memory per distinct hash_id: at most 16
// bytes when rows bring several new ids each (Mooncake rows bring about
// twenty), wherever the load stands between two growths.
func TestBlockTableBytes(t *testing.T) {
	n := 1 << 20
	if testing.Short() || raceEnabled {
		n = 1 << 18
	}
	tb := &blockTable{block: 512}
	defer tb.free()
	worst := 0.0
	r := rowRef{line: 1, lastSize: 100}
	for id := uint64(0); id < uint64(n); id++ {
		if id%8 == 0 {
			r = rowRef{line: r.line + 1, lastSize: 100}
		}
		if _, _, err := tb.use(id*0x9e3779b97f4a7c15, id%8 == 7, &r); err != nil {
			t.Fatal(err)
		}
		if tb.count >= 1<<17 && tb.count%1024 == 0 {
			worst = max(worst, float64(tb.bytes())/float64(tb.count))
		}
	}
	t.Logf("%d ids: %.1f bytes per id at the worst point, %.1f at the end", n, worst, float64(tb.bytes())/float64(tb.count))
	if worst > 16 {
		t.Errorf("%.1f bytes per hash_id, want at most 16", worst)
	}
}

func TestMixIsABijectionOnASample(t *testing.T) {
	seen := map[uint64]uint64{}
	for _, id := range []uint64{0, 1, 2, 3, 1 << 63, ^uint64(0), 0x9e3779b97f4a7c15} {
		h := mix(id)
		if prev, dup := seen[h]; dup {
			t.Fatalf("mix(%d) == mix(%d)", id, prev)
		}
		seen[h] = id
	}
}
