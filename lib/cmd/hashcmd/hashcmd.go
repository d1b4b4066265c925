// Package hashcmd is the aiperf-hash command: content digests (and, with
// the stage settings, cache keys).
package hashcmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/digest"
	"github.com/urfave/cli/v2"
)

// New returns the aiperf-hash application: digest (digest.go) and key
// (key.go), which share memoFlags and openMemo, so that keying an unchanged
// input costs a stat.
func New() *cli.App {
	return &cli.App{
		Name:      "aiperf-hash",
		Usage:     "content digests (sha256sum-compatible) and cache keys",
		UsageText: "aiperf-hash digest [flags] [PATH...]\naiperf-hash digest -c LIST\naiperf-hash key [flags] [INPUT...]",
		Commands:  []*cli.Command{digestCommand(), keyCommand()},
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
}

func memoFlags(o *memoOptions) []cli.Flag {
	return []cli.Flag{
		&cli.PathFlag{Name: "dir", Usage: "cache root `DIR` holding the digest memo (default: $AIPERF_CACHE_DIR, else the user cache dir + /aiperf)", Destination: &o.dir},
		&cli.BoolFlag{Name: "no-memo", Usage: "read every file: neither consult nor update the digest memo", Destination: &o.noMemo},
	}
}

// cacheRoot resolves the cache root, absolute: --dir, else
// $AIPERF_CACHE_DIR, else the user cache directory + "/aiperf". The cache
// stage's lib/cachedir (Resolve, and Memo for the folder below) owns this
// rule and is not on main yet; this copy follows it exactly and goes when
// aiperf-hash can import it.
func cacheRoot(flag string) (string, error) {
	dir := flag
	if dir == "" {
		dir = os.Getenv("AIPERF_CACHE_DIR")
	}
	if dir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache root: %w (set AIPERF_CACHE_DIR or --dir)", err)
		}
		dir = filepath.Join(d, "aiperf")
	}
	return filepath.Abs(dir)
}

// memoDir is the folder of the cache root reserved for the digest memo.
const memoDir = "memo"

// openMemo returns the memo the options choose, or nil with the reason
// (--no-memo, or no cache root) for a verbose note.
func openMemo(o *memoOptions) (*digest.Memo, string) {
	if o.noMemo {
		return nil, "--no-memo"
	}
	root, err := cacheRoot(o.dir)
	if err != nil {
		return nil, err.Error()
	}
	return digest.OpenMemo(filepath.Join(root, memoDir)), ""
}
