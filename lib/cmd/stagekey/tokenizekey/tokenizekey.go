// Package tokenizekey holds the settings of aiperf-tokenize that shape
// its records (and its other flags), their flag definitions and checks,
// for aiperf-tokenize and aiperf-hash key alike: the half of lib/cmd/stagekey
// that reads traces, apart so that aiperf-pack, which imports stagekey, links
// no trace parser.
package tokenizekey

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/stagekey"
	"github.com/aiperf/toolkit/lib/internal/shard"
	"github.com/aiperf/toolkit/lib/trace"
	"github.com/urfave/cli/v2"
)

// Tokenize are the aiperf-tokenize settings that shape records bytes.
type Tokenize struct {
	Type      string
	Tokenizer string
	BlockSize int // 0: the trace format's own (trace.KVBlockSize)
	Seed      uint64
	Start     float64 // ms; <0 = unset
	End       float64 // ms; <0 = unset
	MaxISL    int
	MaxOSL    int
	Shard     string
	// ModelMap renames the recorded models of agentic records
	// (weka_trace), TRACE_MODEL=SERVED; aiperf-pack's --model names the
	// served model of every request.
	ModelMap cli.StringSlice
	// NoBlocks writes weka_trace records with every prompt's whole text
	// (not the block form).
	NoBlocks bool
}

// BuiltinTokenizer is the --tokenizer value naming the builtin tokenizer.
const BuiltinTokenizer = "builtin"

// IsBuiltin reports whether the --tokenizer value names the builtin one.
func (s *Tokenize) IsBuiltin() bool { return s.Tokenizer == "" || s.Tokenizer == BuiltinTokenizer }

// TokenizeFlags returns the flags of aiperf-tokenize that shape its output,
// bound to s.
func TokenizeFlags(s *Tokenize) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "type", Usage: "trace `FORMAT`: " + strings.Join(trace.Types, ", ") + " (default: detect from the first record)", Destination: &s.Type},
		&cli.StringFlag{Name: "tokenizer", Value: BuiltinTokenizer, Usage: "`builtin` (Qwen3) or a tokenizer.json, a folder holding one, or a Hugging Face cache snapshot", Destination: &s.Tokenizer},
		&cli.IntFlag{Name: "block-size", Usage: fmt.Sprintf("tokens per hash_id block (default: %d for %s, else %d)", trace.KVBlockSize(trace.TypeBailian), trace.TypeBailian, trace.KVBlockSize(trace.TypeMooncake)), Destination: &s.BlockSize},
		&cli.Uint64Flag{Name: "seed", Usage: "seed of the prompt synthesis", Destination: &s.Seed},
		&cli.Float64Flag{Name: "start-offset", Value: -1, Usage: "drop trace rows with a timestamp before `MS`", Destination: &s.Start},
		&cli.Float64Flag{Name: "end-offset", Value: -1, Usage: "drop trace rows with a timestamp after `MS`", Destination: &s.End},
		&cli.IntFlag{Name: "max-isl", Usage: "drop trace rows with input_length above `N`", Destination: &s.MaxISL},
		&cli.IntFlag{Name: "max-osl", Usage: "cap output_length (max_tokens) at `N`", Destination: &s.MaxOSL},
		&cli.StringSliceFlag{Name: "model-map", Usage: "weka_trace: send the trace's model `TRACE_MODEL=SERVED` as SERVED (repeatable)", Destination: &s.ModelMap},
		&cli.BoolFlag{Name: "no-blocks", Usage: "weka_trace: write every prompt's whole text, not the block form (each distinct block's text once, requests referring to blocks)", Destination: &s.NoBlocks},
		&cli.StringFlag{Name: "shard", Usage: "emit only sessions i, i+N, ... of the trace (`i/N`, 0-based); packing every shard gives the unsharded store", Destination: &s.Shard,
			Action: refuseEmptyShard},
	}
}

// refuseEmptyShard refuses --shard given as "": the flag absent is the
// whole trace, and an empty value is a mistake (an unset variable), not a
// request for it.
func refuseEmptyShard(_ *cli.Context, v string) error {
	if v == "" {
		return base.UsageError(`--shard "": want i/N with 0 <= i < N (shard 0/4 is the first of four; leave --shard out for the whole trace)`)
	}
	return nil
}

// Checked are tokenize settings turned into stage options.
type Checked struct {
	Trace      trace.Options
	ModelMap   map[string]string
	ShardIndex int
	ShardCount int
}

// Check validates the settings and converts them; its errors are the usage
// errors of aiperf-tokenize.
func (s *Tokenize) Check() (Checked, error) {
	topt, err := s.traceOptions()
	if err != nil {
		return Checked{}, base.UsageError("%v", err)
	}
	idx, cnt := 0, 1 // no --shard: the whole trace
	if s.Shard != "" {
		if idx, cnt, err = shard.Parse(s.Shard); err != nil {
			return Checked{}, base.UsageError("--shard %q: %v", s.Shard, err)
		}
	}
	mm, err := s.modelMap()
	if err != nil {
		return Checked{}, base.UsageError("%v", err)
	}
	return Checked{Trace: topt, ShardIndex: idx, ShardCount: cnt, ModelMap: mm}, nil
}

// modelMap parses --model-map's TRACE_MODEL=SERVED pairs.
func (s *Tokenize) modelMap() (map[string]string, error) {
	vals := s.ModelMap.Value()
	if len(vals) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, v := range vals {
		k, served, ok := strings.Cut(v, "=")
		if !ok || k == "" || served == "" {
			return nil, fmt.Errorf("--model-map %q: want TRACE_MODEL=SERVED", v)
		}
		if prev, dup := m[k]; dup && prev != served {
			return nil, fmt.Errorf("--model-map maps %q twice (to %q and %q)", k, prev, served)
		}
		m[k] = served
	}
	return m, nil
}

func (s *Tokenize) traceOptions() (trace.Options, error) {
	o := trace.Options{Type: s.Type, MaxInputLength: s.MaxISL, MaxOutputLength: s.MaxOSL}
	if s.Type != "" && !slices.Contains(trace.Types, s.Type) {
		// Checked here, not only when the trace is opened, so that
		// aiperf-hash key refuses what the stage refuses.
		return o, fmt.Errorf("--type %q: unknown trace format (want one of %s)", s.Type, strings.Join(trace.Types, ", "))
	}
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
	if o.StartOffsetNS != nil && o.EndOffsetNS != nil && *o.EndOffsetNS < *o.StartOffsetNS {
		// it would drop every timestamped row and keep the others
		return o, fmt.Errorf("--end-offset %v is before --start-offset %v: no timestamp is in between", s.End, s.Start)
	}
	if s.MaxISL < 0 || s.MaxOSL < 0 || s.BlockSize < 0 {
		return o, errors.New("--max-isl, --max-osl and --block-size must not be negative")
	}
	return o, nil
}

// Fields returns the key fields of checked settings for a trace of format
// typ (--type, or the format aiperf-tokenize detects when it is absent),
// one per flag but --tokenizer (a key records the tokenizer's identity
// instead of its path: see cachekey.Tokenizer). Values are canonical, the
// ones the stage works with, so that a flag given its default value keys
// as its absence does: the format, the block size (0 is the format's own),
// the offsets as nanoseconds, the shard as i/N.
func (s *Tokenize) Fields(c Checked, typ string) []stagekey.Field {
	ns := func(p *int64) string {
		if p == nil {
			return "unset"
		}
		return strconv.FormatInt(*p, 10)
	}
	fs := []stagekey.Field{
		{Name: "tokenize.type", Value: typ},
		{Name: "tokenize.block-size", Value: strconv.Itoa(cmp.Or(s.BlockSize, trace.KVBlockSize(typ)))},
		{Name: "tokenize.seed", Value: strconv.FormatUint(s.Seed, 10)},
		{Name: "tokenize.start-offset", Value: ns(c.Trace.StartOffsetNS)},
		{Name: "tokenize.end-offset", Value: ns(c.Trace.EndOffsetNS)},
		{Name: "tokenize.max-isl", Value: strconv.Itoa(s.MaxISL)},
		{Name: "tokenize.max-osl", Value: strconv.Itoa(s.MaxOSL)},
		{Name: "tokenize.shard", Value: fmt.Sprintf("%d/%d", c.ShardIndex, c.ShardCount)},
	}
	if typ == trace.TypeWeka {
		// only the block form's own format: the others' keys stay
		fs = append(fs, stagekey.Field{Name: "tokenize.no-blocks", Value: strconv.FormatBool(s.NoBlocks)})
	}
	return fs
}

// TokenizeRun are aiperf-tokenize's other settings: none changes a byte of
// its output.
type TokenizeRun struct {
	Verify       bool
	MaxLineBytes int
	Verbose      bool
}

// Check validates the settings as aiperf-tokenize does (aiperf-hash key
// refuses what the stage refuses, limits included).
func (r *TokenizeRun) Check() error {
	if r.MaxLineBytes < 1 {
		return base.UsageError("--max-line-bytes must be positive")
	}
	return nil
}

// TokenizeRunFlags returns aiperf-tokenize's flags that are not in the key,
// bound to r.
func TokenizeRunFlags(r *TokenizeRun) []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "verify", Usage: "re-encode every synthesized prompt and fail (exit 1) unless it has exactly input_length tokens", Destination: &r.Verify},
		&cli.IntFlag{Name: "max-line-bytes", Value: trace.DefaultMaxLineBytes, Usage: "refuse a trace line longer than `N` bytes (memory stays within a small multiple of the longest line)", Destination: &r.MaxLineBytes},
		&cli.BoolFlag{Name: "v", Usage: "print a summary on stderr", Destination: &r.Verbose},
	}
}

// NeedsModel reports whether a trace of format typ gives records that
// aiperf-pack formats (prompts and messages), which need --model: all but
// the formats of verbatim request bodies.
func NeedsModel(typ string) bool {
	return typ != trace.TypeRawPayload && typ != trace.TypeInputsJSON
}

// Settings returns aiperf-tokenize's part of a store's settings, for the
// end line of its records: the salt, the fields of the checked settings for
// a trace of format typ, and the tokenizer's identity (tok nil: it could
// not be named, and the part leaves it out).
func (s *Tokenize) Settings(c Checked, typ string, tok *cachekey.Tokenizer) (string, error) {
	b := cachekey.New(cachekey.CurrentSalt())
	for _, f := range s.Fields(c, typ) {
		b.Field(f.Name, f.Value)
	}
	if tok != nil {
		b.Tokenizer(*tok)
	}
	return b.Explain()
}
