package cachecmd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cache"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/urfave/cli/v2"
)

func lookupCommand(o *options) *cli.Command {
	var verify bool
	return &cli.Command{
		Name:      "lookup",
		Usage:     "print the path of KEY's store and exit 0, or exit 1 (printing nothing) on a miss",
		ArgsUsage: "KEY",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "verify", Usage: "re-hash every file of the entry first; a damaged entry is a miss", Destination: &verify},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "KEY"); err != nil {
				return err
			}
			k, err := keyArg(c, c.Args().First())
			if err != nil {
				return err
			}
			cc, err := o.open(c)
			if err != nil {
				return err
			}
			defer cc.Close()
			e, err := cc.Lookup(k)
			if err == nil && verify {
				_, err = cc.Verify(k)
			}
			if err != nil {
				if errors.Is(err, cache.ErrMiss) || errors.As(err, new(*cache.VerifyError)) {
					o.logf(c, "miss: %v", err)
					return base.No("")
				}
				return err
			}
			fmt.Fprintln(c.App.Writer, e.Path())
			return nil
		},
	}
}

func populateCommand(o *options) *cli.Command {
	var (
		opt           cache.PopulateOptions
		explain, efil string
		unchecked     bool
	)
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "move", Usage: "rename FILE into the cache (it disappears) instead of linking it", Destination: &opt.Move},
		&cli.BoolFlag{Name: "copy", Usage: "copy FILE even where a hard link would do", Destination: &opt.Copy},
	}
	return &cli.Command{
		Name:  "populate",
		Usage: "store FILE... (a store first, then e.g. its inputs.json) as KEY's entry",
		Description: "On the same filesystem each FILE is hard-linked in (O(1)) and becomes read-only: it now is the\n" +
			"cached file too, so replace it rather than write into it. Elsewhere it is copied. A store's\n" +
			"digest is the checksum in its trailer, so a multi-GB store is never re-read; verify re-hashes.\n" +
			"If KEY already has a complete entry, it stays and FILE... is dropped.",
		ArgsUsage: "KEY FILE...",
		Flags:     append(flags, explainFlags(&explain, &efil, &unchecked)...),
		Action: func(c *cli.Context) error {
			if c.NArg() < 2 {
				return base.UsageError("populate: want KEY FILE..., got %d argument(s)", c.NArg())
			}
			k, err := keyArg(c, c.Args().First())
			if err != nil {
				return err
			}
			if opt.Explain, err = readExplain(k, explain, efil); err != nil {
				return err
			}
			cc, err := o.open(c)
			if err != nil {
				return err
			}
			defer cc.Close()
			ki := o.keyInfo(c, cc, k, opt.Explain, unchecked)
			opt.Explain, opt.Inputs = ki.explain, ki.inputs
			start := time.Now()
			e, stored, err := cc.Populate(k, c.Args().Tail(), opt)
			if err != nil {
				return ki.annotate(err)
			}
			if stored {
				o.logf(c, "stored %s: %d file(s), %s in %v", k, len(e.Manifest.Files), cache.FormatSize(e.Size()), time.Since(start).Round(time.Microsecond))
			} else {
				o.logf(c, "%s was already cached; kept that entry", k)
			}
			return nil
		},
	}
}

func restoreCommand(o *options) *cli.Command {
	var opt cache.RestoreOptions
	return &cli.Command{
		Name:  "restore",
		Usage: "put KEY's store at DEST (a hard link; --copy for an independent copy); exit 1 on a miss",
		Description: "DEST gets the entry's first file (its store); when DEST is a folder (it exists, or ends in /)\n" +
			"every file of the entry goes into it under its own name. Each file appears complete or not at\n" +
			"all. A hard link is the cached file itself: it is read-only, and writing into it in place would\n" +
			"damage the entry. Across filesystems, or with --copy, files are copied (writable).",
		ArgsUsage: "KEY DEST",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "copy", Usage: "copy instead of hard-linking (safe to modify)", Destination: &opt.Copy},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 2, "KEY DEST"); err != nil {
				return err
			}
			k, err := keyArg(c, c.Args().Get(0))
			if err != nil {
				return err
			}
			if err := checkDest("restore", c.Args().Get(1)); err != nil {
				return err
			}
			cc, err := o.open(c)
			if err != nil {
				return err
			}
			defer cc.Close()
			return o.restore(c, cc, k, c.Args().Get(1), opt)
		},
	}
}

func (o *options) restore(c *cli.Context, cc *cache.Cache, k cache.Key, dest string, opt cache.RestoreOptions) error {
	rs, err := cc.Restore(k, dest, opt)
	if errors.Is(err, cache.ErrMiss) {
		o.logf(c, "miss: %v", err)
		return base.No("")
	}
	if err != nil {
		return err
	}
	o.logRestored(c, rs)
	return nil
}

func rmCommand(o *options) *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove the entries of KEY...; exit 1 if one was not there",
		ArgsUsage: "KEY...",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return base.UsageError("rm: want KEY...")
			}
			cc, err := o.open(c)
			if err != nil {
				return err
			}
			defer cc.Close()
			var missing []string
			for _, a := range c.Args().Slice() {
				k, err := keyArg(c, a)
				if err != nil {
					return err
				}
				if err := cc.Remove(k); errors.Is(err, cache.ErrMiss) {
					missing = append(missing, k.String())
				} else if err != nil {
					return err
				}
			}
			if len(missing) > 0 {
				return base.No("rm: not in the cache: %s", strings.Join(missing, " "))
			}
			return nil
		},
	}
}
