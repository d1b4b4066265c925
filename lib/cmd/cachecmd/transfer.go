package cachecmd

import (
	"errors"
	"fmt"
	"os"

	"github.com/aiperf/toolkit/lib/cache"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/internal/term"
	"github.com/urfave/cli/v2"
)

func exportCommand(o *options) *cli.Command {
	var out string
	return &cli.Command{
		Name:      "export",
		Usage:     "write KEY's entry as a zstd-compressed tar stream on stdout (or -o FILE); exit 1 on a miss",
		ArgsUsage: "KEY",
		Description: "aiperf-cache export KEY | ssh node aiperf-cache import\n" +
			"The stream holds the manifest, then each file; import re-checks every digest. Export checks\n" +
			"each file as it streams it: a damaged entry exits 1 and its stream is cut short inside the\n" +
			"damaged file, so that no import accepts it (-o FILE then writes nothing).",
		Flags: []cli.Flag{
			&cli.PathFlag{Name: "o", Usage: "write the stream to `FILE` (appears complete or not at all)", Destination: &out},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "KEY"); err != nil {
				return err
			}
			k, err := keyArg(c, c.Args().First())
			if err != nil {
				return err
			}
			if out == "" && term.Is(c.App.Writer) {
				return base.UsageError("export: refusing to write a binary stream to a terminal (pipe it, or -o FILE)")
			}
			cc, err := o.open(c)
			if err != nil {
				return err
			}
			defer cc.Close()
			if out == "" {
				return exportErr(o, c, cc.Export(c.Context, k, c.App.Writer))
			}
			f, err := atomicfile.Create(out)
			if err != nil {
				return err
			}
			defer f.Abort()
			if err := exportErr(o, c, cc.Export(c.Context, k, f)); err != nil {
				return err
			}
			return f.Commit()
		},
	}
}

func exportErr(o *options, c *cli.Context, err error) error {
	var ve *cache.VerifyError
	switch {
	case errors.As(err, &ve):
		return base.No("export: %v: the entry is damaged; the stream was cut short so that no import accepts it (aiperf-cache verify --repair moves the entry aside)", oneLine(err))
	case errors.Is(err, cache.ErrMiss):
		o.logf(c, "miss: %v", err)
		return base.No("")
	}
	return err
}

func importCommand(o *options) *cli.Command {
	var maxSize string
	return &cli.Command{
		Name:      "import",
		Usage:     "read an entry's stream (from aiperf-cache export) from stdin or FILE and publish it",
		ArgsUsage: "[FILE|-]",
		Description: "Every member is checked before the entry appears: the manifest first, then only regular\n" +
			"files it lists, at its sizes, once each, with matching digests (a store also against its own\n" +
			"trailer, whatever the manifest says). The stream is read to the archive's end and no further\n" +
			"than a little zero padding. Anything else is refused (exit 2) and leaves nothing behind.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "max-size", Usage: "refuse an entry larger than `SIZE` (default: the root's max-size)", Destination: &maxSize},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return base.UsageError("import: want at most one FILE")
			}
			var opt cache.ImportOptions
			if maxSize != "" {
				var err error
				if opt.MaxSize, err = cache.ParseSize(maxSize); err != nil {
					return base.UsageError("--max-size: %v", err)
				}
			}
			if a := c.Args().First(); a == "" || a == "-" {
				if f, ok := c.App.Reader.(*os.File); ok && term.Is(f) {
					return base.UsageError("import: refusing to read a binary stream from a terminal (pipe it in, or give FILE)")
				}
			}
			in, name, _, err := base.OpenInput(c, c.Args().First())
			if err != nil {
				return err
			}
			defer in.Close()
			cc, err := o.open(c)
			if err != nil {
				return err
			}
			defer cc.Close()
			e, stored, err := cc.Import(c.Context, in, opt)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if stored {
				o.logf(c, "imported %s: %d file(s), %s", e.Key, len(e.Manifest.Files), cache.FormatSize(e.Size()))
			} else {
				o.logf(c, "%s was already cached", e.Key)
			}
			return nil
		},
	}
}
