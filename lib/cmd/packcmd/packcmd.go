// Package packcmd is the aiperf-pack command: records JSONL in, one store file out.
package packcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/pack"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

type options struct {
	out         string
	inputsJSON  string
	compress    bool
	noEndMarker bool
	maxLine     string
	extra       cli.StringSlice
	verbose     bool
	req         request.Options
}

// RequestFlags returns the flags that change the bytes of a packed store, bound to o.
// aiperf-hash reads the same definitions so cache keys cannot drift.
func RequestFlags(o *request.Options) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "model `NAME` written into every formatted body", Destination: &o.Model},
		&cli.StringFlag{Name: "endpoint", Value: request.Chat, Usage: "endpoint `TYPE`: chat (/v1/chat/completions) or completions (/v1/completions)", Destination: &o.Endpoint},
		&cli.BoolFlag{Name: "streaming", Usage: `set "stream": true (server-sent events)`, Destination: &o.Streaming},
		&cli.BoolFlag{Name: "legacy-max-tokens", Usage: "chat: write max_tokens instead of max_completion_tokens", Destination: &o.LegacyMaxTokens},
		&cli.BoolFlag{Name: "include-usage", Usage: `with --streaming: add "stream_options":{"include_usage":true}`, Destination: &o.IncludeUsage},
	}
}

// New returns the aiperf-pack application.
func New() *cli.App {
	var o options
	flags := []cli.Flag{
		&cli.PathFlag{Name: "o", Aliases: []string{"output"}, Usage: "output store `FILE` (required; a store is never written to stdout)", Destination: &o.out},
	}
	flags = append(flags, RequestFlags(&o.req)...)
	flags = append(flags,
		&cli.StringSliceFlag{Name: "extra", Usage: "merge `K=V` (V as JSON if valid, else a string) or a JSON object into every formatted body; repeatable; model and stream are set by --model and --streaming only", Destination: &o.extra},
		&cli.PathFlag{Name: "inputs-json", Usage: "also write the Python aiperf's inputs.json to `FILE`", Destination: &o.inputsJSON},
		&cli.BoolFlag{Name: "compress", Usage: "write a zstd stream of the store (for shipping; `aiperf-pack unpack` restores it)", Destination: &o.compress},
		&cli.BoolFlag{Name: "no-end-marker", Usage: "accept record streams without the end line (hand-made input)", Destination: &o.noEndMarker},
		&cli.StringFlag{Name: "max-line", Value: "256MiB", Usage: "refuse a records line longer than `SIZE` (bytes, or with a KiB, MiB or GiB suffix); memory use is a small multiple of the longest line", Destination: &o.maxLine},
		&cli.BoolFlag{Name: "v", Usage: "print a summary on stderr", Destination: &o.verbose},
	)
	return &cli.App{
		Name:      "aiperf-pack",
		Usage:     "pack records JSONL into one store file (request bodies formatted once)",
		ArgsUsage: "[records.jsonl|- ...]",
		Description: "Reads records (aiperf-tokenize output) from the files given, or stdin, merges shards by their\n" +
			"line field and writes one .aipk store. Subcommands inspect a store.\n\n" +
			"Outputs (-o, --inputs-json) are written to a temporary file beside them and renamed into place,\n" +
			"so they must be regular files (or absent): a device, a FIFO or - is refused, and so is an output\n" +
			"that is one of the inputs.",
		Flags: flags,
		Action: func(c *cli.Context) error {
			return runPack(c, &o)
		},
		Commands: []*cli.Command{verifyCommand(), dumpCommand(), statCommand(), unpackCommand()},
	}
}

func runPack(c *cli.Context, o *options) error {
	opt, err := packOptions(o)
	if err != nil {
		return err
	}
	names := c.Args().Slice()
	if len(names) == 0 {
		names = []string{"-"}
	}
	var (
		inputs []pack.Input
		read   atomic.Int64
		total  int64
	)
	for _, n := range names {
		rc, name, size, err := base.OpenInput(c, n)
		if err != nil {
			return err
		}
		defer rc.Close()
		total += max(size, 0)
		in := pack.Input{Name: name, R: base.CountingReader{R: rc, N: &read}}
		if f, ok := rc.(interface{ Stat() (fs.FileInfo, error) }); ok {
			in.Info, _ = f.Stat()
		}
		inputs = append(inputs, in)
	}
	prog := base.NewProgress(c.App.ErrWriter)
	defer prog.Done()
	opt.Progress = func(n int) { prog.Printf("aiperf-pack %s %d records", base.Bar(read.Load(), total), n) }
	st, err := pack.Run(c.Context, inputs, o.out, opt)
	prog.Done()
	if err != nil {
		return flagHint(err)
	}
	if o.verbose {
		fmt.Fprintf(c.App.ErrWriter, "aiperf-pack: %s: %d records, %d sessions, %d body bytes\n", o.out, st.Records, st.Sessions, st.BodyBytes)
	}
	return nil
}

// packOptions checks the flags and turns them into pack options.
func packOptions(o *options) (pack.Options, error) {
	if o.out == "" {
		return pack.Options{}, base.UsageError("-o FILE is required (a store is never written to stdout)")
	}
	if o.out == "-" || o.inputsJSON == "-" {
		// Outputs are written to a temporary file and renamed into place
		// (lib/internal/atomicfile), never streamed.
		return pack.Options{}, base.UsageError("-o and --inputs-json take a file name; a store is never written to stdout")
	}
	for _, e := range o.extra.Value() {
		fs, err := request.ParseExtra(e)
		if err != nil {
			return pack.Options{}, base.UsageError("--extra %v", err)
		}
		o.req.Extra = append(o.req.Extra, fs...)
	}
	if err := o.req.Validate(); err != nil {
		if errors.Is(err, request.ErrReserved) {
			return pack.Options{}, base.UsageError("--extra: %v (use --model and --streaming)", err)
		}
		return pack.Options{}, base.UsageError("--endpoint: %v", err)
	}
	if !o.req.Streaming && o.req.IncludeUsage {
		return pack.Options{}, base.UsageError("--include-usage needs --streaming")
	}
	maxLine, err := parseSize(o.maxLine)
	if err != nil {
		return pack.Options{}, base.UsageError("--max-line %q: %v", o.maxLine, err)
	}
	return pack.Options{Request: o.req, NoEndMarker: o.noEndMarker, MaxLine: maxLine,
		InputsJSON: o.inputsJSON, Compress: o.compress}, nil
}

// flagHint names the flag that changes the outcome of an error (libraries
// do not know flag names).
func flagHint(err error) error {
	switch {
	case errors.Is(err, record.ErrNoEnd):
		return fmt.Errorf("%w (use --no-end-marker for hand-made streams)", err)
	case errors.Is(err, record.ErrLineTooLong):
		return fmt.Errorf("%w (see --max-line)", err)
	case errors.Is(err, request.ErrNoModel):
		return fmt.Errorf("%w (--model)", err)
	}
	return err
}

// parseSize reads a byte count: digits with an optional K, KiB, M, MiB, G
// or GiB suffix (all binary).
func parseSize(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = t[:len(t)-len(u.suffix)], u.mult
			break
		}
	}
	n, err := strconv.ParseUint(strings.TrimSpace(t), 10, 63)
	if err != nil || n == 0 {
		return 0, errors.New("want a positive byte count such as 268435456 or 256MiB")
	}
	if n > store.MaxPayload/mult {
		return 0, fmt.Errorf("more than %d bytes, the largest record a store holds", uint64(store.MaxPayload))
	}
	return int(n * mult), nil
}
