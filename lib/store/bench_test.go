package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// benchDir holds stores shared by the benchmarks of one process; TestMain
// removes it.
var (
	benchDirOnce sync.Once
	benchDir     string
	benchStores  sync.Map // name → path
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchStore writes a store of n records with payloads of size bytes once per
// process. interleave spreads the records over n/8 sessions of 8 turns in
// shuffled order (a lookup table); otherwise every record is its own
// single-turn session (the grouped layout).
func benchStore(b *testing.B, n, size int, interleave bool) string {
	b.Helper()
	name := fmt.Sprintf("n%d-s%d-i%v.aipk", n, size, interleave)
	if p, ok := benchStores.Load(name); ok {
		return p.(string)
	}
	benchDirOnce.Do(func() {
		var err error
		benchDir, err = os.MkdirTemp("", "aipk-bench-")
		if err != nil {
			b.Fatal(err)
		}
	})
	path := filepath.Join(benchDir, name)
	if err := writeBenchStore(path, n, size, interleave); err != nil {
		b.Fatal(err)
	}
	benchStores.Store(name, path)
	return path
}

func writeBenchStore(path string, n, size int, interleave bool) error {
	w, err := Create(path, WriterOptions{Meta: map[string]string{"bench": "1"}})
	if err != nil {
		return err
	}
	defer w.Abort()
	payload := payloadFor(0, size)
	if !interleave {
		for i := range n {
			s := w.AddSession("s")
			if err := w.Add(Entry{Line: uint64(i + 1), Session: s}, payload); err != nil {
				return err
			}
		}
		return w.Commit()
	}
	const turns = 8
	ns := n / turns
	for range ns {
		w.AddSession("s")
	}
	order := make([]uint32, 0, n)
	for s := range ns {
		for range turns {
			order = append(order, uint32(s))
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	next := make([]uint32, ns)
	for i, s := range order {
		if err := w.Add(Entry{Line: uint64(i + 1), Session: s, Turn: next[s]}, payload); err != nil {
			return err
		}
		next[s]++
	}
	return w.Commit()
}

// BenchmarkOpen1M opens a 1,000,000-record store without prefault: the
// header, section and bound checks (12 bytes per record, plus the session
// table and the lookup table). The page cache is warm.
func BenchmarkOpen1M(b *testing.B) {
	for _, interleave := range []bool{false, true} {
		name := "single-turn"
		if interleave {
			name = "interleaved"
		}
		b.Run(name, func(b *testing.B) {
			path := benchStore(b, 1_000_000, 64, interleave)
			b.ResetTimer()
			for b.Loop() {
				r, err := Open(path, OpenOptions{})
				if err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
		})
	}
}

// BenchmarkPayload fetches random records of 0..64 KiB: "slice" is the
// zero-copy access itself, "copy" also copies the bytes out (what handing
// them to write(2) costs), with throughput in payload bytes.
func BenchmarkPayload(b *testing.B) {
	spec := concurrentSpec()
	path := filepath.Join(b.TempDir(), "s.aipk")
	if err := WriteSpec(path, spec); err != nil {
		b.Fatal(err)
	}
	r, err := Open(path, OpenOptions{Prefault: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	idx := make([]int, 4096)
	var total int
	for i := range idx {
		idx[i] = rng.IntN(r.Len())
		total += len(spec.Records[idx[i]].Payload)
	}
	b.Run("slice", func(b *testing.B) {
		var n int
		i := 0
		for b.Loop() {
			n += len(r.Payload(idx[i%len(idx)]))
			i++
		}
		touchSink.Store(uint32(byte(n)))
	})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(int64(total / len(idx)))
		buf := make([]byte, 64<<10)
		i := 0
		for b.Loop() {
			copy(buf, r.Payload(idx[i%len(idx)]))
			i++
		}
		touchSink.Store(uint32(buf[0]))
	})
}

// BenchmarkLookupEntry is the replay hot path without the payload: find a
// turn, read its index row.
func BenchmarkLookupEntry(b *testing.B) {
	path := benchStore(b, 1_000_000, 64, true)
	r, err := Open(path, OpenOptions{Prefault: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	keys := make([][2]uint32, 4096)
	for i := range keys {
		keys[i] = [2]uint32{rng.Uint32N(uint32(r.NumSessions())), rng.Uint32N(8)}
	}
	var sum uint64
	i := 0
	for b.Loop() {
		k := keys[i%len(keys)]
		j, _ := r.Lookup(k[0], k[1])
		sum += r.Entry(j).Line
		i++
	}
	touchSink.Store(uint32(byte(sum)))
}

// BenchmarkWrite packs 256 MiB in 4 KiB records (interleaved sessions, so
// the lookup table is built too) and reports the throughput, hashing
// included.
func BenchmarkWrite(b *testing.B) {
	const size, n = 4 << 10, 64 << 10
	b.SetBytes(size * n)
	dir := b.TempDir()
	for b.Loop() {
		if err := writeBenchStore(filepath.Join(dir, "w.aipk"), n, size, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify hashes a 256 MiB store.
func BenchmarkVerify(b *testing.B) {
	path := benchStore(b, 64<<10, 4<<10, true)
	r, err := Open(path, OpenOptions{Prefault: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.SetBytes(r.Size())
	for b.Loop() {
		if err := r.Verify(); err != nil {
			b.Fatal(err)
		}
	}
}
