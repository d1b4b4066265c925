// Command store measures the costs of lib/store that have targets: the
// prefault of store.Open against a bare mmap + MADV_POPULATE_READ of the same
// file (target ratio ≤ 1.1), and the Open of a 1,000,000-record store without
// prefault (target ≤ 5 ms). It builds its stores in a temporary directory
// under os.TempDir and removes them at the end (unless -keep).
//
//	go run ./scripts/bench/store -size 2GiB -rounds 7 -opens 15
//
// The page cache is assumed warm (the stores were just written; dropping
// caches needs root and is not attempted). Every figure is given as wall time
// and as the CPU time of the measuring thread: on a shared machine the wall
// time includes waiting for a core, the thread time does not.
package main

import (
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/store"
	"golang.org/x/sys/unix"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/store:", err)
		os.Exit(2)
	}
}

func run() error {
	size := flag.String("size", "2GiB", "size of the prefault store (suffixes KiB, MiB, GiB)")
	record := flag.Int("record", 64<<10, "payload bytes per record of the prefault store")
	rounds := flag.Int("rounds", 7, "alternating rounds of bare prefault vs store.Open")
	records := flag.Int("records", 1_000_000, "records in the Open store")
	opens := flag.Int("opens", 15, "timed Opens of the records store (median reported)")
	dir := flag.String("dir", "", "directory for the stores (default: a new one under os.TempDir, removed at the end); existing stores in it are reused")
	keep := flag.Bool("keep", false, "keep the stores")
	flag.Parse()
	total, err := parseSize(*size)
	if err != nil {
		return err
	}
	if *rounds < 1 || *opens < 1 || *record < 1 || *records < 1 {
		return fmt.Errorf("-rounds, -opens, -record and -records must be positive")
	}

	runtime.LockOSThread() // so that the thread's CPU clock is the work's CPU time
	d := *dir
	if d == "" {
		d, err = os.MkdirTemp("", "aipk-bench-")
		if err != nil {
			return err
		}
		if !*keep {
			defer os.RemoveAll(d)
		}
	}
	fmt.Printf("machine: %d CPUs, load average %s\n", runtime.NumCPU(), loadavg())

	big := filepath.Join(d, fmt.Sprintf("big-%d-%d.aipk", total, *record))
	n := int(total / int64(*record))
	if err := ensure(big, func() error { return buildBig(big, n, *record) }); err != nil {
		return err
	}
	if err := prefaultRounds(big, *rounds); err != nil {
		return err
	}

	for _, interleave := range []bool{false, true} {
		name := filepath.Join(d, fmt.Sprintf("records-%d-%v.aipk", *records, interleave))
		if err := ensure(name, func() error { return buildRecords(name, *records, interleave) }); err != nil {
			return err
		}
		if err := openRuns(name, *opens, interleave); err != nil {
			return err
		}
	}
	fmt.Printf("load average at the end: %s\n", loadavg())
	return nil
}

// ensure builds path unless it already holds a store that opens.
func ensure(path string, build func() error) error {
	if r, err := store.Open(path, store.OpenOptions{}); err == nil {
		fmt.Printf("reusing %s (%d records, %s)\n", path, r.Len(), human(r.Size()))
		return r.Close()
	}
	return build()
}

// buildBig writes n records of size random bytes each (a record number in
// front), and reports the packing throughput.
func buildBig(path string, n, size int) error {
	payload := make([]byte, size)
	rand.Read(payload)
	w, err := store.Create(path, store.WriterOptions{Meta: map[string]string{"bench": "prefault"}})
	if err != nil {
		return err
	}
	defer w.Abort()
	start := time.Now()
	c0 := threadCPU()
	for i := range n {
		s := w.AddSession(strconv.Itoa(i))
		binary.LittleEndian.PutUint64(payload, uint64(i))
		if err := w.Add(store.Entry{Line: uint64(i + 1), Session: s}, payload); err != nil {
			return err
		}
	}
	adds := time.Since(start)
	if err := w.Commit(); err != nil {
		return err
	}
	wall, cpu := time.Since(start), threadCPU()-c0
	bytes := float64(n) * float64(size)
	fmt.Printf("built %s: %d records of %d B in %v (%.2f GB/s wall; Adds %v, Commit with fsync %v; caller thread CPU %v)\n",
		filepath.Base(path), n, size, wall.Round(time.Millisecond), bytes/wall.Seconds()/1e9,
		adds.Round(time.Millisecond), (wall - adds).Round(time.Millisecond), cpu.Round(time.Millisecond))
	return nil
}

// buildRecords writes n small records: single-turn sessions in order, or
// sessions of 8 turns interleaved (a lookup table).
func buildRecords(path string, n int, interleave bool) error {
	w, err := store.Create(path, store.WriterOptions{Meta: map[string]string{"bench": "open"}})
	if err != nil {
		return err
	}
	defer w.Abort()
	payload := []byte(`{"model":"m","messages":[{"role":"user","content":"hello"}],"max_tokens":16}`)
	start := time.Now()
	if !interleave {
		for i := range n {
			s := w.AddSession("session-" + strconv.Itoa(i))
			if err := w.Add(store.Entry{Line: uint64(i + 1), Session: s}, payload); err != nil {
				return err
			}
		}
	} else {
		const turns = 8
		ns := (n + turns - 1) / turns
		for i := range ns {
			w.AddSession("session-" + strconv.Itoa(i))
		}
		next := make([]uint32, ns)
		x := uint64(1)
		for i := 0; i < n; {
			x = x*6364136223846793005 + 1442695040888963407
			s := uint32((x >> 33) % uint64(ns))
			if next[s] == turns || (s == uint32(ns-1) && int(next[s]) >= n-(ns-1)*turns) {
				continue // full; try another
			}
			if err := w.Add(store.Entry{Line: uint64(i + 1), Session: s, Turn: next[s]}, payload); err != nil {
				return err
			}
			next[s]++
			i++
		}
	}
	if err := w.Commit(); err != nil {
		return err
	}
	fmt.Printf("built %s in %v\n", filepath.Base(path), time.Since(start).Round(time.Millisecond))
	return nil
}

// bare maps the file, populates it with MADV_POPULATE_READ and unmaps it.
func bare(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	if err := unix.Madvise(m, unix.MADV_POPULATE_READ); err != nil {
		unix.Munmap(m)
		return err
	}
	return unix.Munmap(m)
}

func storeOpen(path string, opt store.OpenOptions) error {
	r, err := store.Open(path, opt)
	if err != nil {
		return err
	}
	return r.Close()
}

type sample struct{ wall, cpu time.Duration }

func measure(fn func() error) (sample, error) {
	c0 := threadCPU()
	t0 := time.Now()
	err := fn()
	return sample{time.Since(t0), threadCPU() - c0}, err
}

func prefaultRounds(path string, rounds int) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	// One untimed round of each warms the page cache and the code.
	if err := bare(path); err != nil {
		return err
	}
	if err := storeOpen(path, store.OpenOptions{Prefault: true}); err != nil {
		return err
	}
	var a, b []sample
	var ratios []float64
	for i := range rounds {
		sa, err := measure(func() error { return bare(path) })
		if err != nil {
			return err
		}
		sb, err := measure(func() error { return storeOpen(path, store.OpenOptions{Prefault: true}) })
		if err != nil {
			return err
		}
		a, b = append(a, sa), append(b, sb)
		ratios = append(ratios, sb.wall.Seconds()/sa.wall.Seconds())
		fmt.Printf("  round %d: (a) bare mmap+MADV_POPULATE_READ+munmap %v (cpu %v)   (b) store.Open(Prefault)+Close %v (cpu %v)\n",
			i+1, sa.wall.Round(time.Microsecond), sa.cpu.Round(time.Microsecond), sb.wall.Round(time.Microsecond), sb.cpu.Round(time.Microsecond))
	}
	ma, mb := median(a), median(b)
	fmt.Printf("prefault %s (%s): median (a) %v wall / %v cpu, (b) %v wall / %v cpu; ratio b/a %.3f wall (median of per-round ratios %.3f), %.3f cpu  [target ≤ 1.1]\n",
		filepath.Base(path), human(fi.Size()), ma.wall.Round(time.Microsecond), ma.cpu.Round(time.Microsecond),
		mb.wall.Round(time.Microsecond), mb.cpu.Round(time.Microsecond),
		mb.wall.Seconds()/ma.wall.Seconds(), medianF(ratios), mb.cpu.Seconds()/ma.cpu.Seconds())
	return nil
}

func openRuns(path string, runs int, interleave bool) error {
	if err := storeOpen(path, store.OpenOptions{}); err != nil { // warm-up
		return err
	}
	var s []sample
	for range runs {
		x, err := measure(func() error { return storeOpen(path, store.OpenOptions{}) })
		if err != nil {
			return err
		}
		s = append(s, x)
	}
	m := median(s)
	walls := make([]string, len(s))
	for i, x := range s {
		walls[i] = fmt.Sprintf("%.2f", x.wall.Seconds()*1e3)
	}
	kind := "single-turn sessions (no lookup table)"
	if interleave {
		kind = "8-turn sessions interleaved (lookup table)"
	}
	fmt.Printf("open %s, %s, prefault off, %d runs: median %.3f ms wall, %.3f ms cpu; min %.3f ms wall  [target ≤ 5 ms]\n  walls (ms): %s\n",
		filepath.Base(path), kind, runs, m.wall.Seconds()*1e3, m.cpu.Seconds()*1e3, minWall(s).Seconds()*1e3, strings.Join(walls, " "))
	return nil
}

func median(s []sample) sample {
	w := make([]time.Duration, len(s))
	c := make([]time.Duration, len(s))
	for i, x := range s {
		w[i], c[i] = x.wall, x.cpu
	}
	slices.Sort(w)
	slices.Sort(c)
	return sample{w[len(w)/2], c[len(c)/2]}
}

func medianF(f []float64) float64 {
	f = slices.Clone(f)
	slices.Sort(f)
	return f[len(f)/2]
}

func minWall(s []sample) time.Duration {
	m := s[0].wall
	for _, x := range s {
		m = min(m, x.wall)
	}
	return m
}

// threadCPU is the CPU time of the calling OS thread (user and system),
// from CLOCK_THREAD_CPUTIME_ID: getrusage counts in scheduler ticks, too
// coarse for a few milliseconds.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad -size %q", s)
	}
	return int64(n * float64(mult)), nil
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}
