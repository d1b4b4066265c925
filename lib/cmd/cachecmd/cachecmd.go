// Package cachecmd is the aiperf-cache command: a content-addressed cache
// of packed stores that never serves a partial entry.
package cachecmd

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/aiperf/toolkit/lib/cache"
	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/urfave/cli/v2"
)

// LockFileEnv names the environment variable that makes key locks use lock
// files instead of flock(2) ("1"): for filesystems where flock is
// unreliable, and for tests of that mode.
const LockFileEnv = "AIPERF_CACHE_LOCK_FILE"

type options struct {
	dir     string
	shared  bool
	verbose bool
	// local holds the same flags given after the command's name. (Binding
	// both to one variable would not do: the command's flag set writes its
	// default over a value given before the name.)
	local *options
}

func (o *options) root() string {
	if o.local.dir != "" {
		return o.local.dir
	}
	return o.dir
}

func (o *options) isShared() bool  { return o.shared || o.local.shared }
func (o *options) isVerbose() bool { return o.verbose || o.local.verbose }

// common returns the flags every command takes, bound to o.
func common(o *options) []cli.Flag {
	return []cli.Flag{
		&cli.PathFlag{Name: "dir", Usage: "cache root `DIR` (default $" + cachedir.Env + ", else the user cache folder/aiperf)", Destination: &o.dir},
		&cli.BoolFlag{Name: "shared", Usage: "a team cache: create the root so (group-writable 2775 folders, group-readable files), and trust a root or entries of another user in the root's group, which you are in (without it they are refused)", Destination: &o.shared},
		&cli.BoolFlag{Name: "v", Usage: "say what happened on stderr (why a lookup missed, how a file was restored)", Destination: &o.verbose},
	}
}

// New returns the aiperf-cache application.
func New() *cli.App {
	o := &options{local: &options{}}
	cmds := []*cli.Command{
		lookupCommand(o), populateCommand(o), restoreCommand(o), ensureCommand(o),
		gcCommand(o), lsCommand(o), verifyCommand(o), rmCommand(o), exportCommand(o), importCommand(o),
	}
	for _, c := range cmds {
		c.Flags = append(c.Flags, common(o.local)...)
	}
	cmds = append(cmds, guardCommand())
	return &cli.App{
		Name:  "aiperf-cache",
		Usage: "a content-addressed cache of packed stores that never serves a partial entry",
		Description: "Entries are keyed by what aiperf-hash prints (sha256:<64 hex>) or by a name of [a-z0-9._-].\n" +
			"KEY - reads the key from the first line of stdin. An entry appears complete or not at all;\n" +
			"restore hard-links its files (read-only: write a new file rather than into a restored one,\n" +
			"or restore --copy).",
		Flags:    common(o),
		Commands: cmds,
	}
}

func (o *options) open(c *cli.Context) (*cache.Cache, error) {
	root, err := cachedir.Resolve(o.root())
	if err != nil {
		return nil, err
	}
	cc, err := cache.Open(root, cache.Options{
		Shared:   o.isShared(),
		Tool:     "aiperf-cache " + base.Version,
		LockFile: os.Getenv(LockFileEnv) == "1",
	})
	if err != nil {
		return nil, err
	}
	return cc, nil
}

func (o *options) logf(c *cli.Context, format string, args ...any) {
	if o.isVerbose() {
		fmt.Fprintf(c.App.ErrWriter, "aiperf-cache: "+format+"\n", args...)
	}
}

// keyArg parses the key argument; "-" reads the first line of stdin.
func keyArg(c *cli.Context, s string) (cache.Key, error) {
	if s == "-" {
		line, err := cache.ReadKeyLine(c.App.Reader)
		if err != nil {
			return cache.Key{}, base.UsageError("KEY -: %v", err)
		}
		s = strings.TrimSpace(line)
	}
	k, err := cache.ParseKey(s)
	if err != nil {
		return cache.Key{}, base.UsageError("%v", err)
	}
	return k, nil
}

func needArgs(c *cli.Context, n int, usage string) error {
	if c.NArg() != n {
		return base.UsageError("%s: want %s, got %d argument(s)", c.Command.Name, usage, c.NArg())
	}
	return nil
}

func explainFlags(text, file *string, unchecked *bool) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "explain", Usage: "record `TEXT` (what the key was hashed from: aiperf-hash key --explain) in the manifest, and refuse a store that records other settings than it describes (default: the note aiperf-hash key left in the cache root for KEY)", Destination: text},
		&cli.PathFlag{Name: "explain-file", Usage: "--explain with the text of `FILE`", Destination: file},
		&cli.BoolFlag{Name: "unchecked", Usage: "without --explain: do not check the store against the note aiperf-hash key left for KEY (a store of an older aiperf-pack records no settings)", Destination: unchecked},
	}
}

// keyInfo is what populate and ensure know of a key: the description a
// store is checked against (--explain, else the note aiperf-hash key left
// in the root, unless --unchecked) and the inputs' names the note gives.
type keyInfo struct {
	explain  string
	inputs   []string
	fromNote bool
}

func (o *options) keyInfo(c *cli.Context, cc *cache.Cache, k cache.Key, explain string, unchecked bool) keyInfo {
	ki := keyInfo{explain: explain}
	n, err := cc.KeyNote(k)
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "aiperf-cache: warning: %v (the note is ignored)\n", err)
	}
	if _, digest := k.Digest(); n == nil && digest && explain == "" {
		o.logf(c, "%s: aiperf-hash key left no note of it in this root: a store is not checked against what the key describes (give --explain-file)", k)
	}
	if n == nil {
		return ki
	}
	ki.inputs = n.Inputs
	if explain == "" && !unchecked {
		ki.explain, ki.fromNote = n.Explain, true
		o.logf(c, "checking the store against what %s describes (the note aiperf-hash key left)", k)
	}
	return ki
}

// annotate words a refusal of a store by where the description came from.
func (ki keyInfo) annotate(err error) error {
	var se *cache.SettingsError
	if ki.fromNote && errors.As(err, &se) {
		se.From, se.Remedy = "the note aiperf-hash key left of it", "give --unchecked"
	}
	return err
}

// readExplain returns the text of --explain or --explain-file for key k:
// for a digest key, the text must be what the key was hashed from (its
// SHA-256 is the key), so a manifest never keeps the explanation of another
// key.
func readExplain(k cache.Key, text, file string) (string, error) {
	if file != "" {
		if text != "" {
			return "", base.UsageError("--explain and --explain-file together")
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		text = string(b)
	}
	if err := cache.CheckExplain(k, text); err != nil {
		return "", base.UsageError("--explain: %v (give the text of aiperf-hash key --explain with the same flags and inputs)", err)
	}
	return text, nil
}

func entryName(in cache.Info) string {
	if in.Key.IsZero() {
		return in.Dir
	}
	return in.Key.String()
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
