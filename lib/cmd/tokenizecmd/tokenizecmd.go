// Package tokenizecmd is the aiperf-tokenize command: a trace in, records JSONL out.
package tokenizecmd

import (
	"errors"
	"fmt"

	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/synth"
	"github.com/aiperf/toolkit/lib/tokenize"
	"github.com/aiperf/toolkit/lib/tokenizer"
	"github.com/aiperf/toolkit/lib/trace"
	"github.com/urfave/cli/v2"
)

// Settings are the options that change output bytes; aiperf-hash reads the
// same definitions (Flags) so a cache key cannot drift from the stage.
type Settings struct {
	Type      string
	Tokenizer string
	BlockSize int
	Seed      uint64
	Start     float64 // ms; <0 = unset
	End       float64 // ms; <0 = unset
	MaxISL    int
	MaxOSL    int
}

// Flags returns the byte-changing flags bound to s.
func Flags(s *Settings) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "type", Usage: "trace `FORMAT`: " + strings.Join(trace.Types, ", ") + " (default: detect from the first record)", Destination: &s.Type},
		&cli.StringFlag{Name: "tokenizer", Value: "builtin", Usage: "`builtin` (Qwen3) or a tokenizer.json, a folder holding one, or a Hugging Face cache snapshot", Destination: &s.Tokenizer},
		&cli.IntFlag{Name: "block-size", Usage: "tokens per hash_id block (default: 16 for bailian_trace, else 512)", Destination: &s.BlockSize},
		&cli.Uint64Flag{Name: "seed", Usage: "seed of the prompt synthesis", Destination: &s.Seed},
		&cli.Float64Flag{Name: "start-offset", Value: -1, Usage: "drop trace rows with a timestamp before `MS`", Destination: &s.Start},
		&cli.Float64Flag{Name: "end-offset", Value: -1, Usage: "drop trace rows with a timestamp after `MS`", Destination: &s.End},
		&cli.IntFlag{Name: "max-isl", Usage: "drop trace rows with input_length above `N`", Destination: &s.MaxISL},
		&cli.IntFlag{Name: "max-osl", Usage: "cap output_length (max_tokens) at `N`", Destination: &s.MaxOSL},
	}
}

// TraceOptions converts the settings to trace reader options.
func (s *Settings) TraceOptions() (trace.Options, error) {
	o := trace.Options{Type: s.Type, MaxInputLength: s.MaxISL, MaxOutputLength: s.MaxOSL}
	for _, v := range []struct {
		ms  float64
		dst **int64
		nm  string
	}{{s.Start, &o.StartOffsetNS, "--start-offset"}, {s.End, &o.EndOffsetNS, "--end-offset"}} {
		if v.ms >= 0 {
			ns := int64(v.ms*1e6 + 0.5)
			*v.dst = &ns
		} else if v.ms != -1 {
			return o, fmt.Errorf("%s must not be negative", v.nm)
		}
	}
	if s.MaxISL < 0 || s.MaxOSL < 0 || s.BlockSize < 0 {
		return o, errors.New("--max-isl, --max-osl and --block-size must not be negative")
	}
	return o, nil
}

// LoadTokenizer loads "builtin" or a path.
func LoadTokenizer(name string) (*tokenizer.Tokenizer, error) {
	if name == "" || name == "builtin" {
		return tokenizer.Builtin()
	}
	return tokenizer.Load(name)
}

// New returns the aiperf-tokenize application.
func New() *cli.App {
	var (
		s       Settings
		shard   string
		verify  bool
		verbose bool
	)
	flags := Flags(&s)
	flags = append(flags,
		&cli.StringFlag{Name: "shard", Usage: "emit only sessions i, i+N, ... of the trace (`i/N`, 0-based); packing every shard gives the unsharded store", Destination: &shard},
		&cli.BoolFlag{Name: "verify", Usage: "re-encode every synthesized prompt and fail (exit 1) unless it has exactly input_length tokens", Destination: &verify},
		&cli.BoolFlag{Name: "v", Usage: "print a summary on stderr", Destination: &verbose},
	)
	return &cli.App{
		Name:      "aiperf-tokenize",
		Usage:     "turn a trace into records JSONL (exact-length prompts from input_length and hash_ids)",
		ArgsUsage: "[TRACE|-]",
		Description: "Reads a trace file or directory (or stdin) and writes records JSONL to stdout, ending with\n" +
			"the end line. Verbatim inputs (raw payloads, messages, inputs.json) pass through untouched.",
		Flags: flags,
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return base.UsageError("want at most one TRACE argument")
			}
			topt, err := s.TraceOptions()
			if err != nil {
				return base.UsageError("%v", err)
			}
			idx, cnt, err := parseShard(shard)
			if err != nil {
				return base.UsageError("--shard %q: %v", shard, err)
			}
			name := c.Args().First()
			var (
				tr    *trace.Reader
				read  atomic.Int64
				in    = base.CountingReader{N: &read}
				total int64
			)
			if name == "" || name == "-" {
				in.R = c.App.Reader
				tr, err = trace.NewReader(in, "<stdin>", topt)
			} else if fi, serr := os.Stat(name); serr == nil && fi.Mode().IsRegular() {
				// A regular file is read through a counter so the progress bar knows how far it is.
				f, oerr := os.Open(name)
				if oerr != nil {
					return classify(oerr)
				}
				defer f.Close()
				in.R, total = f, fi.Size()
				tr, err = trace.NewReader(in, name, topt)
			} else {
				tr, err = trace.Open(name, topt)
			}
			if err != nil {
				return classify(err)
			}
			defer tr.Close()
			bs := s.BlockSize
			if bs == 0 {
				bs = synth.DefaultBlockSize
				if tr.Type() == trace.TypeBailian {
					bs = 16
				}
			}
			prog := base.NewProgress(c.App.ErrWriter)
			start := time.Now()
			o := tokenize.Options{
				Synth:      synth.Options{Seed: s.Seed, BlockSize: bs},
				ShardIndex: idx, ShardCount: cnt,
				Verify:    verify,
				Tokenizer: func() (*tokenizer.Tokenizer, error) { return LoadTokenizer(s.Tokenizer) },
				Progress: func(rows, tokens int64) {
					prog.Printf("aiperf-tokenize %s %d rows, %.1fM prompt tokens", base.Bar(read.Load(), total), rows, float64(tokens)/1e6)
				},
			}
			st, err := tokenize.Run(c.Context, tr, c.App.Writer, o)
			prog.Done()
			if err != nil {
				if errors.Is(err, tokenize.ErrVerify) {
					return base.No("%v", err)
				}
				return classify(err)
			}
			if verbose {
				el := time.Since(start).Seconds()
				fmt.Fprintf(c.App.ErrWriter, "aiperf-tokenize: %s (%s): %d rows, %d emitted, %d sessions, %d prompt tokens, %d blocks, %.2fs (%.1fM tokens/s)",
					displayName(name), tr.Type(), st.Rows, st.Emitted, st.Sessions, st.PromptTokens, st.Blocks, el, float64(st.PromptTokens)/el/1e6)
				if verify {
					fmt.Fprintf(c.App.ErrWriter, ", %d prompts verified", st.Verified)
				}
				if off, long := tr.Dropped(); off+long > 0 {
					fmt.Fprintf(c.App.ErrWriter, ", dropped %d by offset and %d by length", off, long)
				}
				fmt.Fprintln(c.App.ErrWriter)
			}
			return nil
		},
	}
}

func displayName(n string) string {
	if n == "" || n == "-" {
		return "<stdin>"
	}
	return n
}

func parseShard(s string) (int, int, error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, errors.New("want i/N with 0 <= i < N")
	}
	return i, n, nil
}

func classify(err error) error {
	var te *trace.Error
	if errors.As(err, &te) || errors.Is(err, os.ErrNotExist) {
		return &base.Error{Code: base.ExitTrouble, Err: err}
	}
	return err
}
