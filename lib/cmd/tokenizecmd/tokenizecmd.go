// Package tokenizecmd is the aiperf-tokenize command: a trace in, records JSONL out.
package tokenizecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/stagekey/tokenizekey"
	"github.com/aiperf/toolkit/lib/digest"
	"github.com/aiperf/toolkit/lib/ingest"
	"github.com/aiperf/toolkit/lib/synth"
	"github.com/aiperf/toolkit/lib/tokenizer"
	"github.com/aiperf/toolkit/lib/tokenizer/identity"
	"github.com/aiperf/toolkit/lib/trace"
	"github.com/urfave/cli/v2"
)

// LoadTokenizer loads "builtin" or a path.
func LoadTokenizer(s *tokenizekey.Tokenize) (*tokenizer.Tokenizer, error) {
	if s.IsBuiltin() {
		return tokenizer.Builtin()
	}
	return tokenizer.Load(s.Tokenizer)
}

// options are one run of the command: its settings, its input and the
// streams it reads and writes.
type options struct {
	tokenizekey.Tokenize
	tokenizekey.TokenizeRun

	input  string    // a trace file or directory; "" or "-" is stdin
	stdin  io.Reader // read when input is stdin
	stdout io.Writer // the records
	stderr io.Writer // the summary, the progress line
}

// New returns the aiperf-tokenize application.
func New() *cli.App {
	var o options
	// Every flag is defined in lib/cmd/stagekey, which classifies it for cache
	// keys (aiperf-hash key reads the same definitions).
	flags := append(tokenizekey.TokenizeFlags(&o.Tokenize), tokenizekey.TokenizeRunFlags(&o.TokenizeRun)...)
	return &cli.App{
		Name:      "aiperf-tokenize",
		Usage:     "turn a trace into records JSONL (exact-length prompts from input_length and hash_ids)",
		ArgsUsage: "[TRACE|-]",
		Description: "Reads a trace file or directory (or stdin) and writes records JSONL to stdout, ending with\n" +
			"the end line. Verbatim inputs (raw payloads, messages, inputs.json) pass through untouched,\n" +
			"re-emitted on one line. A directory is read for its *.jsonl regular files: a named pipe or\n" +
			"a device among them is an error. A failed write of the records (a full disk) is reported\n" +
			"once, as an error of the output; a reader that went away (| head, or a failed aiperf-pack)\n" +
			"stops it without a word (exit 141).",
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
	chk, err := o.Tokenize.Check()
	if err != nil {
		return err
	}
	if err := o.TokenizeRun.Check(); err != nil {
		return err
	}
	idx, cnt := chk.ShardIndex, chk.ShardCount
	tr, name, err := openTrace(o, chk.Trace)
	if err != nil {
		return explain(err)
	}
	defer tr.Close()

	// A closed pipe on stdout comes back as an error (EPIPE), not a signal
	// to die of, so the run returns through its cleanup; base.Main then
	// exits 141 without a word, as coreutils do.
	signal.Ignore(syscall.SIGPIPE)
	prog := base.NewProgress(o.stderr)
	start := time.Now()
	st, err := ingest.Run(ctx, tr, o.stdout, ingest.Options{
		Synth:      synth.Options{Seed: o.Seed, BlockSize: o.BlockSize},
		ShardIndex: idx, ShardCount: cnt,
		Verify:     o.Verify,
		ModelMap:   chk.ModelMap,
		NoBlocks:   o.Tokenize.NoBlocks,
		Tokenizer:  func() (*tokenizer.Tokenizer, error) { return LoadTokenizer(&o.Tokenize) },
		OutputName: "<stdout>",
		Settings: func(typ string) (string, error) {
			// The tokenizer's identity as aiperf-hash key names it; one
			// that cannot be named (a verbatim trace never loads it) is
			// left out, and a cache check then says so.
			var tok *cachekey.Tokenizer
			if t, err := identity.Of(ctx, &digest.Hasher{}, o.Tokenize.Tokenizer, o.Tokenize.IsBuiltin()); err == nil {
				tok = &t
			}
			return o.Tokenize.Settings(chk, typ, tok)
		},
		Progress: func(rows, tokens int64) {
			read, size := tr.Progress()
			prog.Printf("aiperf-tokenize %s %d rows, %.1fM prompt tokens", base.Bar(read, size), rows, float64(tokens)/1e6)
		},
	})
	prog.Done()
	if err != nil {
		if errors.Is(err, ingest.ErrVerify) {
			return base.No("%v", err)
		}
		return explain(err)
	}
	if o.Verbose {
		summary(o, name, tr, st, time.Since(start))
	} else if off, long := tr.Dropped(); long > 0 {
		// rows dropped by a limit are requests lost: said even without -v
		fmt.Fprintf(o.stderr, "aiperf-tokenize: %s: --max-isl %d dropped %d of %d rows (input_length above %d)\n",
			name, o.MaxISL, long, st.Rows+int64(off+long+tr.Skipped()), o.MaxISL)
	}
	return nil
}

// openTrace opens the input (stdin for "" or -) with the trace options
// the flags gave, and returns the name messages give it.
func openTrace(o options, topt trace.Options) (*trace.Reader, string, error) {
	topt.MaxLineBytes = o.MaxLineBytes
	if o.input == "" || o.input == "-" {
		tr, err := trace.NewReader(o.stdin, "<stdin>", topt)
		return tr, "<stdin>", err
	}
	tr, err := trace.Open(o.input, topt)
	return tr, o.input, err
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

// summary prints the -v line. Its counts say what became of every row
// read: kept, or dropped (by reason) or skipped; of the kept rows, the
// records this shard emitted.
func summary(o options, name string, tr *trace.Reader, st ingest.Stats, took time.Duration) {
	el := took.Seconds()
	w := o.stderr
	off, long := tr.Dropped()
	skipped := tr.Skipped()
	fmt.Fprintf(w, "aiperf-tokenize: %s (%s): read %d rows, kept %d", name, tr.Type(), st.Rows+int64(off+long+skipped), st.Rows)
	var gone []string
	if off > 0 {
		gone = append(gone, fmt.Sprintf("dropped %d by offset", off))
	}
	if long > 0 {
		gone = append(gone, fmt.Sprintf("dropped %d by length", long))
	}
	if skipped > 0 {
		gone = append(gone, fmt.Sprintf("skipped %d without numbers in the required columns", skipped))
	}
	if len(gone) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(gone, ", "))
	}
	// a shard's records, sessions and tokens; the blocks are the trace's
	blocks := fmt.Sprintf("%d blocks", st.Blocks)
	if st.ShardSessions != st.Sessions {
		blocks = fmt.Sprintf("the trace's %d sessions and %d blocks", st.Sessions, st.Blocks)
	}
	fmt.Fprintf(w, ", emitted %d records, %d sessions, %d prompt tokens, %s, %.2fs (%.1fM tokens/s)",
		st.Emitted, st.ShardSessions, st.PromptTokens, blocks, el, float64(st.PromptTokens)/el/1e6)
	if o.Verify {
		fmt.Fprintf(w, ", %d prompts verified", st.Verified)
	}
	if n := tr.Capped(); n > 0 {
		fmt.Fprintf(w, ", %d max_tokens capped", n)
	}
	fmt.Fprintln(w)
}
