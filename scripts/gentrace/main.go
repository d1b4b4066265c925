// Command gentrace writes a Mooncake-style trace (timestamp, input_length,
// output_length, hash_ids) of any size for scale tests, with prefix sharing
// shaped like the Mooncake conversation trace: most requests start with a
// shared system block (hash_id 0), and about a fifth continue an earlier
// conversation, reusing its full blocks as their prefix.
//
//	go run ./scripts/gentrace -tokens 100000000 > big.jsonl
//
// With -weka DIR it writes Weka-shaped agentic traces instead (the
// kv-cache-tester format of --type weka_trace; see package weka):
//
//	go run ./scripts/gentrace -weka traces -traces 20 -turns 30 -big-tokens 500000
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/aiperf/toolkit/scripts/gentrace/weka"
)

func main() {
	tokens := flag.Int64("tokens", 100_000_000, "stop after this many prompt tokens in total")
	rows := flag.Int("rows", 0, "stop after this many rows instead (0: use -tokens)")
	block := flag.Int("block-size", 512, "tokens per hash_id block")
	cont := flag.Float64("continue", 0.2, "fraction of rows that continue an earlier conversation")
	meanBlocks := flag.Float64("mean-blocks", 26, "mean blocks in a new conversation's first request")
	rate := flag.Float64("rate", 3, "mean requests per second (Poisson arrivals)")
	seed := flag.Uint64("seed", 1, "random seed")
	wekaDir := flag.String("weka", "", "write Weka agentic traces (trace_NNNN.json) into this `DIR` instead")
	traces := flag.Int("traces", 3, "with -weka: trace files")
	turns := flag.Int("turns", 8, "with -weka: root requests a trace")
	bigTokens := flag.Int("big-tokens", 0, "with -weka: the first trace's last prompt has at least this many tokens")
	flag.Parse()
	if *wekaDir != "" {
		bs := *block
		if !isSet("block-size") {
			bs = 64
		}
		n, err := weka.Write(*wekaDir, weka.Options{Traces: *traces, Turns: *turns, BlockSize: bs, BigTokens: *bigTokens, Seed: *seed})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "gentrace: %d traces, %d requests in %s\n", *traces, n, *wekaDir)
		return
	}

	rng := rand.New(rand.NewPCG(*seed, 0x9e3779b97f4a7c15))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()

	type conv struct{ full []uint64 } // full blocks of the latest request
	var convs []conv
	next := uint64(1) // hash_id 0 is the shared system block
	t := 0.0
	var total int64
	var buf []byte
	for n := 0; ; n++ {
		if *rows > 0 && n >= *rows || *rows == 0 && total >= *tokens {
			break
		}
		var prefix []uint64
		ci := -1
		if len(convs) > 0 && rng.Float64() < *cont {
			ci = rng.IntN(len(convs))
			prefix = convs[ci].full
		} else {
			prefix = []uint64{0}
		}
		// New blocks: log-normal around the mean (new conversations), a few for a follow-up turn.
		mean := *meanBlocks
		if ci >= 0 {
			mean = 3
		}
		k := int(math.Round(math.Exp(rng.NormFloat64()*0.8 + math.Log(mean) - 0.32)))
		if k < 1 {
			k = 1
		}
		ids := append(append([]uint64(nil), prefix...), make([]uint64, k)...)
		for i := len(prefix); i < len(ids); i++ {
			ids[i] = next
			next++
		}
		last := 1 + rng.IntN(*block)
		inLen := (len(ids)-1)**block + last
		outLen := int(math.Round(math.Exp(rng.NormFloat64()*0.9 + math.Log(250))))
		if outLen < 1 {
			outLen = 1
		}
		// The next turn may reuse this request's full blocks (not its partial last one).
		full := ids[:len(ids)-1]
		if ci >= 0 {
			convs[ci].full = full
		} else {
			convs = append(convs, conv{full: full})
			if len(convs) > 4096 {
				convs = convs[1:]
			}
		}
		t += rng.ExpFloat64() / *rate * 1000
		buf = append(buf[:0], `{"timestamp": `...)
		buf = strconv.AppendInt(buf, int64(t), 10)
		buf = append(buf, `, "input_length": `...)
		buf = strconv.AppendInt(buf, int64(inLen), 10)
		buf = append(buf, `, "output_length": `...)
		buf = strconv.AppendInt(buf, int64(outLen), 10)
		buf = append(buf, `, "hash_ids": [`...)
		for i, id := range ids {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = strconv.AppendUint(buf, id, 10)
		}
		buf = append(buf, "]}\n"...)
		if _, err := w.Write(buf); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		total += int64(inLen)
	}
}

func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
