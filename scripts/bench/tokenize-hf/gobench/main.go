// Command gobench times lib/tokenizer's Encode on a text file the way
// bench.js times Hugging Face's tokenizers: warm up once, then report the
// median wall time of several encodes of the whole text (or, with -lines,
// of its lines as documents), and of "a"*100000. With -lines and -workers
// N, N goroutines share the lines (as encodeBatch shares them over rayon's
// threads); -workers 1 encodes them one after another.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/tokenizer"
)

func main() {
	text := flag.String("text", "", "file to encode")
	tok := flag.String("tokenizer", "builtin", `"builtin" or a path Load accepts`)
	runs := flag.Int("runs", 7, "timed runs")
	lines := flag.Bool("lines", false, "encode each line of the file on its own, one after another, instead of the whole text")
	workers := flag.Int("workers", 1, "goroutines sharing the lines (with -lines)")
	flag.Parse()
	if *workers < 1 {
		fail(fmt.Errorf("-workers %d", *workers))
	}
	data, err := os.ReadFile(*text)
	if err != nil {
		fail(err)
	}
	start := time.Now()
	var t *tokenizer.Tokenizer
	if *tok == "builtin" {
		t, err = tokenizer.Builtin()
	} else {
		t, err = tokenizer.Load(*tok)
	}
	if err != nil {
		fail(err)
	}
	load := time.Since(start)
	s := string(data)
	docs := []string{s}
	if *lines {
		docs = strings.SplitAfter(s, "\n")
	}
	ids, med := timeIt(t, docs, *runs, *workers)
	_, medA := timeIt(t, []string{strings.Repeat("a", 100000)}, *runs, 1)
	fmt.Printf("go   workers=%d load=%.0fms bytes=%d tokens=%d ids_sha256=%s encode_median=%.1fms a100k_median=%.1fms\n",
		*workers, ms(load), len(s), len(ids), idsDigest(ids), ms(med), ms(medA))
}

// idsDigest is the SHA-256 of the ids written in decimal, comma-separated,
// as bench.js computes it.
func idsDigest(ids []int) string {
	h := sha256.New()
	for i, id := range ids {
		if i > 0 {
			h.Write([]byte{','})
		}
		h.Write(strconv.AppendInt(nil, int64(id), 10))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// timeIt encodes docs: once to warm up (as the Node side does), then runs
// times, timed. It returns the ids of all docs, in order.
func timeIt(t *tokenizer.Tokenizer, docs []string, runs, workers int) ([]int, time.Duration) {
	var ids []int
	for _, d := range encodeAll(t, docs, workers) {
		ids = append(ids, d...)
	}
	var d []time.Duration
	for range runs {
		start := time.Now()
		encodeAll(t, docs, workers)
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	return ids, d[len(d)/2]
}

// encodeAll encodes every doc, on workers goroutines that take the next
// doc from a shared counter (so a long doc does not hold up a fixed share).
func encodeAll(t *tokenizer.Tokenizer, docs []string, workers int) [][]int {
	out := make([][]int, len(docs))
	if workers == 1 {
		for i, s := range docs {
			out[i] = t.Encode(s)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(docs) {
					return
				}
				out[i] = t.Encode(docs[i])
			}
		}()
	}
	wg.Wait()
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gobench:", err)
	os.Exit(1)
}
