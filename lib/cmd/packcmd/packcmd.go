// Package packcmd is the aiperf-pack command: records JSONL in, one store file out.
package packcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/stagekey"
	"github.com/aiperf/toolkit/lib/pack"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/urfave/cli/v2"
)

type options struct {
	stagekey.Pack
	stagekey.PackRun
}

// New returns the aiperf-pack application.
func New() *cli.App {
	var o options
	// Every flag is defined in lib/cmd/stagekey, which classifies it for cache
	// keys (aiperf-hash key reads the same definitions).
	flags := []cli.Flag{}
	run := stagekey.PackRunFlags(&o.PackRun)
	flags = append(flags, run[0]) // -o first
	flags = append(flags, stagekey.PackFlags(&o.Pack)...)
	flags = append(flags, run[1:]...)
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
	opt.Given = pack.Given{Endpoint: c.IsSet("endpoint"), Model: c.IsSet("model"), Streaming: c.IsSet("streaming")}
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
	st, err := pack.Run(c.Context, inputs, o.Out, opt)
	prog.Done()
	if err != nil {
		return flagHint(err)
	}
	if o.Verbose {
		fmt.Fprintf(c.App.ErrWriter, "aiperf-pack: %s: %d records, %d sessions, %d body bytes\n", o.Out, st.Records, st.Sessions, st.BodyBytes)
	}
	return nil
}

// packOptions checks the flags and turns them into pack options.
func packOptions(o *options) (pack.Options, error) {
	if o.Out == "" {
		return pack.Options{}, base.UsageError("-o FILE is required (a store is never written to stdout)")
	}
	if o.Out == "-" || o.InputsJSON == "-" {
		// Outputs are written to a temporary file and renamed into place
		// (lib/internal/atomicfile), never streamed.
		return pack.Options{}, base.UsageError("-o and --inputs-json take a file name; a store is never written to stdout")
	}
	req, err := o.Pack.Check()
	if err != nil {
		return pack.Options{}, err
	}
	maxLine, err := o.PackRun.Check()
	if err != nil {
		return pack.Options{}, err
	}
	// The store records the settings it was built with (its key's
	// description without the input), so that aiperf-cache can refuse to
	// file it under a key that says otherwise.
	settings := func(in []pack.InputSettings) (string, error) {
		recs := make([]stagekey.Records, len(in))
		for i, s := range in {
			recs[i] = stagekey.Records{Name: s.Name, Settings: s.Settings}
		}
		return o.Pack.StoreSettings(req, recs)
	}
	return pack.Options{Request: req, NoEndMarker: o.NoEndMarker, MaxLine: maxLine,
		InputsJSON: o.InputsJSON, Compress: o.Compress, Settings: settings}, nil
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
	if ce := (*pack.ConflictError)(nil); errors.As(err, &ce) && ce.Options() {
		return fmt.Errorf("%w (--%s)", err, ce.Setting)
	}
	return err
}
