// Package hashcmd is the aiperf-hash command: content digests (and, with
// the stage settings, cache keys).
package hashcmd

import (
	"path/filepath"

	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/digest"
	"github.com/urfave/cli/v2"
)

// New returns the aiperf-hash application: digest (digest.go) and key
// (key.go), which share memoFlags and openMemo, so that keying an unchanged
// input costs a stat.
func New() *cli.App {
	global := &memoOptions{}
	return &cli.App{
		Name:      "aiperf-hash",
		Usage:     "content digests (sha256sum-compatible) and cache keys",
		UsageText: "aiperf-hash [--dir DIR] [--no-memo] digest [flags] [PATH...]\naiperf-hash digest -c LIST\naiperf-hash key [flags] [INPUT...]",
		// --dir and --no-memo also before the command's name, as
		// aiperf-cache takes --dir; given after it, they win.
		Flags:    memoFlags(global),
		Commands: []*cli.Command{digestCommand(global), keyCommand(global)},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return base.UsageError("missing command: digest or key (see aiperf-hash --help)")
			}
			return base.UsageError("unknown command %q: want digest or key (see aiperf-hash --help)", c.Args().First())
		},
	}
}

// memoOptions are the flags that choose the digest memo.
type memoOptions struct {
	dir    string
	noMemo bool
	// global holds the same flags given before the command's name (one
	// variable for both would not do: the command's flag set writes its
	// default over a value given before the name).
	global *memoOptions
}

func memoFlags(o *memoOptions) []cli.Flag {
	return []cli.Flag{
		&cli.PathFlag{Name: "dir", Usage: "cache root `DIR` holding the digest memo and key's notes (default: $AIPERF_CACHE_DIR, else the user cache dir + /aiperf)", Destination: &o.dir},
		&cli.BoolFlag{Name: "no-memo", Usage: "read every file: neither consult nor update the digest memo (nor leave key's note)", Destination: &o.noMemo},
	}
}

// openMemo returns the memo the options choose, or nil with the reason
// (--no-memo, or no cache root) for a verbose note.
func openMemo(o *memoOptions) (*digest.Memo, string) {
	dir, noMemo := o.dir, o.noMemo
	if g := o.global; g != nil {
		noMemo = noMemo || g.noMemo
		if dir == "" {
			dir = g.dir
		}
	}
	if noMemo {
		return nil, "--no-memo"
	}
	root, err := cachedir.Resolve(dir)
	if err != nil {
		return nil, err.Error()
	}
	// The root is aiperf-cache's too: made as it makes it (0700, or kept
	// as it is), the memo folder and file with the root's sharing mode.
	shared, err := cachedir.Create(root, false)
	if err != nil {
		return nil, err.Error()
	}
	memoDir := filepath.Join(root, cachedir.Memo)
	if err := cachedir.Mkdir(memoDir, shared); err != nil {
		return nil, err.Error()
	}
	m := digest.OpenMemo(memoDir)
	m.Perm = cachedir.FileMode(shared).Perm()
	return m, ""
}
