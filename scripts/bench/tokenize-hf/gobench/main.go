// Command gobench times lib/tokenizer's Encode on a text file the way
// bench.js times Hugging Face's tokenizers: warm up once, then report the
// median wall time of several encodes of the whole text, and of
// "a"*100000.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/tokenizer"
)

func main() {
	text := flag.String("text", "", "file to encode")
	tok := flag.String("tokenizer", "builtin", `"builtin" or a path Load accepts`)
	runs := flag.Int("runs", 7, "timed runs")
	flag.Parse()
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
	n, med := timeIt(t, s, *runs)
	_, medA := timeIt(t, strings.Repeat("a", 100000), *runs)
	fmt.Printf("go   load=%.0fms bytes=%d tokens=%d encode_median=%.1fms a100k_median=%.1fms\n",
		ms(load), len(s), n, ms(med), ms(medA))
}

func timeIt(t *tokenizer.Tokenizer, s string, runs int) (int, time.Duration) {
	n := len(t.Encode(s)) // warm-up, as the Node side does
	var d []time.Duration
	for range runs {
		start := time.Now()
		t.Encode(s)
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	return n, d[len(d)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gobench:", err)
	os.Exit(1)
}
