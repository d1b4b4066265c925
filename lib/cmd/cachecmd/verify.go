package cachecmd

import (
	"errors"
	"fmt"

	"github.com/aiperf/toolkit/lib/cache"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/urfave/cli/v2"
)

func verifyCommand(o *options) *cli.Command {
	var repair bool
	return &cli.Command{
		Name:      "verify",
		Usage:     "re-hash every file of each entry (or of KEY...); exit 1 if any is bad",
		ArgsUsage: "[KEY...]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "repair", Usage: "move bad entries to the root's quarantine folder", Destination: &repair},
		},
		Action: func(c *cli.Context) error {
			cc, err := o.open(c)
			if err != nil {
				return err
			}
			defer cc.Close()
			var keys []cache.Key
			for _, a := range c.Args().Slice() {
				k, err := keyArg(c, a)
				if err != nil {
					return err
				}
				keys = append(keys, k)
			}
			todo, err := cc.Select(keys)
			if err != nil {
				return err
			}
			bad := 0
			for _, in := range todo {
				ok, err := verifyEntry(c, cc, in, repair)
				if err != nil {
					return err
				}
				if !ok {
					bad++
				}
			}
			if bad > 0 {
				return base.No("verify: %d of %d entries bad", bad, len(todo))
			}
			return nil
		},
	}
}

// verifyEntry re-hashes one entry and prints its verdict; with repair a
// bad entry is moved to the quarantine folder.
func verifyEntry(c *cli.Context, cc *cache.Cache, in cache.Info, repair bool) (ok bool, err error) {
	w := c.App.Writer
	err = in.Err
	if err == nil {
		_, err = cc.Verify(in.Key)
	}
	if err == nil {
		fmt.Fprintf(w, "%s: ok\n", entryName(in))
		return true, nil
	}
	if errors.Is(err, cache.ErrMiss) && in.Dir == "" {
		fmt.Fprintf(w, "%s: not in the cache\n", entryName(in))
		return false, nil
	}
	fmt.Fprintf(w, "%s: BAD: %s\n", entryName(in), oneLine(err))
	if !repair {
		return false, nil
	}
	if in.Dir == "" {
		all, _ := cc.List()
		for _, a := range all {
			if a.Key == in.Key {
				in = a
			}
		}
	}
	to, err := cc.Quarantine(in)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "%s: moved to %s\n", entryName(in), to)
	return false, nil
}
