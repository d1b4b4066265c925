// Command genrecords writes a synthetic records JSONL stream (the input of
// aiperf-pack) for benchmarks: N records with prompts of a given size.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/record"
)

func main() {
	n := flag.Int("n", 1000, "records")
	size := flag.Int("size", 200, "prompt bytes per record")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	// Mostly plain English words; about one word in twenty needs escaping or is not ASCII
	// (a newline now and then, quotes, a tab, accented and CJK text), as in chat prompts.
	plain := []string{"the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "and", "then", "some", "more",
		"words", "appear", "in", "a", "prompt", "with", "done.", "model", "server", "token", "cache", "request"}
	special := []string{"\n", "\"quotes\"", "tabs\t", "café", "数据"}
	rng := rand.New(rand.NewPCG(*seed, 0))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	enc := record.NewEncoder(w)
	var text []byte
	for i := 0; i < *n; i++ {
		text = text[:0]
		for len(text) < *size {
			if rng.IntN(20) == 0 {
				text = append(text, special[rng.IntN(len(special))]...)
			} else {
				text = append(text, plain[rng.IntN(len(plain))]...)
			}
			text = append(text, ' ')
		}
		rec := record.Record{
			Line: uint64(i + 1), Session: int64(i), HasTimestamp: true, TimestampNS: int64(i) * 1e6,
			InputTokens: uint32(len(text) / 4), HasMaxTokens: true, MaxTokens: uint32(16 + rng.IntN(512)),
			Kind: record.KindPrompt, Raw: jsonx.AppendString(nil, string(text)),
		}
		if err := enc.Encode(&rec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if err := enc.End(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
