// Package tokenizecmd is the aiperf-tokenize command: a trace in, records JSONL out.
package tokenizecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
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
	BlockSize int // 0: the trace format's own (trace.KVBlockSize)
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
		&cli.IntFlag{Name: "block-size", Usage: fmt.Sprintf("tokens per hash_id block (default: %d for %s, else %d)", trace.KVBlockSize(trace.TypeBailian), trace.TypeBailian, synth.DefaultBlockSize), Destination: &s.BlockSize},
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

// options are one run of the command: its settings, its input and the
// streams it reads and writes.
type options struct {
	Settings
	shard        string
	verify       bool
	verbose      bool
	maxLineBytes int

	input  string    // a trace file or directory; "" or "-" is stdin
	stdin  io.Reader // read when input is stdin
	stdout io.Writer // the records
	stderr io.Writer // the summary, the progress line
}

// New returns the aiperf-tokenize application.
func New() *cli.App {
	var o options
	flags := append(Flags(&o.Settings),
		&cli.StringFlag{Name: "shard", Usage: "emit only sessions i, i+N, ... of the trace (`i/N`, 0-based); packing every shard gives the unsharded store", Destination: &o.shard},
		&cli.BoolFlag{Name: "verify", Usage: "re-encode every synthesized prompt and fail (exit 1) unless it has exactly input_length tokens", Destination: &o.verify},
		&cli.IntFlag{Name: "max-line-bytes", Value: trace.DefaultMaxLineBytes, Usage: "refuse a trace line longer than `N` bytes (memory stays within a small multiple of the longest line)", Destination: &o.maxLineBytes},
		&cli.BoolFlag{Name: "v", Usage: "print a summary on stderr", Destination: &o.verbose},
	)
	return &cli.App{
		Name:      "aiperf-tokenize",
		Usage:     "turn a trace into records JSONL (exact-length prompts from input_length and hash_ids)",
		ArgsUsage: "[TRACE|-]",
		Description: "Reads a trace file or directory (or stdin) and writes records JSONL to stdout, ending with\n" +
			"the end line. Verbatim inputs (raw payloads, messages, inputs.json) pass through untouched,\n" +
			"re-emitted on one line. A directory is read for its *.jsonl regular files: a named pipe or\n" +
			"a device among them is an error. A failed write of the records (a full disk, a closed pipe)\n" +
			"is reported once, as an error of the output.",
		Flags: flags,
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return base.UsageError("want at most one TRACE argument")
			}
			o.input, o.stdin, o.stdout, o.stderr = c.Args().First(), c.App.Reader, c.App.Writer, c.App.ErrWriter
			return run(c.Context, o)
		},
	}
}

// run tokenizes o.input to o.stdout.
func run(ctx context.Context, o options) error {
	topt, err := o.TraceOptions()
	if err != nil {
		return base.UsageError("%v", err)
	}
	if o.maxLineBytes < 1 {
		return base.UsageError("--max-line-bytes must be positive")
	}
	topt.MaxLineBytes = o.maxLineBytes
	idx, cnt, err := parseShard(o.shard)
	if err != nil {
		return base.UsageError("--shard %q: %v", o.shard, err)
	}
	name := o.input
	if name == "" || name == "-" {
		name = "<stdin>"
	}
	var tr *trace.Reader
	if o.input == "" || o.input == "-" {
		tr, err = trace.NewReader(o.stdin, name, topt)
	} else {
		tr, err = trace.Open(o.input, topt)
	}
	if err != nil {
		return explain(err)
	}
	defer tr.Close()

	// A closed pipe on stdout is an error to report, not a signal to die of.
	signal.Ignore(syscall.SIGPIPE)
	prog := base.NewProgress(o.stderr)
	start := time.Now()
	st, err := tokenize.Run(ctx, tr, o.stdout, tokenize.Options{
		Synth:      synth.Options{Seed: o.Seed, BlockSize: o.BlockSize},
		ShardIndex: idx, ShardCount: cnt,
		Verify:     o.verify,
		Tokenizer:  func() (*tokenizer.Tokenizer, error) { return LoadTokenizer(o.Tokenizer) },
		OutputName: "<stdout>",
		Progress: func(rows, tokens int64) {
			read, size := tr.Progress()
			prog.Printf("aiperf-tokenize %s %d rows, %.1fM prompt tokens", base.Bar(read, size), rows, float64(tokens)/1e6)
		},
	})
	prog.Done()
	if err != nil {
		if errors.Is(err, tokenize.ErrVerify) {
			return base.No("%v", err)
		}
		return explain(err)
	}
	if o.verbose {
		summary(o, name, tr, st, time.Since(start))
	}
	return nil
}

// explain adds the flag to raise to a line that is too long (libraries do
// not name flags).
func explain(err error) error {
	var tl *trace.LineTooLongError
	if errors.As(err, &tl) {
		return fmt.Errorf("%w (--max-line-bytes raises the limit)", err)
	}
	return err
}

// summary prints the -v line.
func summary(o options, name string, tr *trace.Reader, st tokenize.Stats, took time.Duration) {
	el := took.Seconds()
	w := o.stderr
	fmt.Fprintf(w, "aiperf-tokenize: %s (%s): %d rows, %d emitted, %d sessions, %d prompt tokens, %d blocks, %.2fs (%.1fM tokens/s)",
		name, tr.Type(), st.Rows, st.Emitted, st.Sessions, st.PromptTokens, st.Blocks, el, float64(st.PromptTokens)/el/1e6)
	if o.verify {
		fmt.Fprintf(w, ", %d prompts verified", st.Verified)
	}
	if off, long := tr.Dropped(); off+long > 0 {
		fmt.Fprintf(w, ", dropped %d by offset and %d by length", off, long)
	}
	if n := tr.Capped(); n > 0 {
		fmt.Fprintf(w, ", %d max_tokens capped", n)
	}
	if n := tr.Skipped(); n > 0 {
		fmt.Fprintf(w, ", skipped %d rows without numbers in the required columns", n)
	}
	fmt.Fprintln(w)
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
