// Package cachecmd is the aiperf-cache command: a content-addressed cache
// of packed stores that never serves a partial entry.
package cachecmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aiperf/toolkit/lib/cache"
	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
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
		line, err := readKeyLine(c.App.Reader)
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

// maxKeyLine bounds the first line of stdin that KEY - reads: the longest
// key, a carriage return and the newline.
const maxKeyLine = cache.MaxKeyLen + 2

// readKeyLine reads the first line of r one byte at a time, so that nothing
// after it is consumed (ensure hands the rest of stdin to CMD), and no more
// than maxKeyLine bytes of it (a first line of 500 MB is not a key: it used
// to be read whole first).
func readKeyLine(r io.Reader) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) <= maxKeyLine {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				return string(line), nil
			}
			line = append(line, b[0])
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(line) == 0 {
				return "", errors.New("no key on stdin")
			}
			return string(line), nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("the first line of stdin is longer than any key (%d bytes)", cache.MaxKeyLen)
}

func needArgs(c *cli.Context, n int, usage string) error {
	if c.NArg() != n {
		return base.UsageError("%s: want %s, got %d argument(s)", c.Command.Name, usage, c.NArg())
	}
	return nil
}

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

func explainFlags(text, file *string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "explain", Usage: "record `TEXT` (what the key was hashed from: aiperf-hash key --explain) in the manifest, and refuse a store that records other settings than it describes", Destination: text},
		&cli.PathFlag{Name: "explain-file", Usage: "--explain with the text of `FILE`", Destination: file},
	}
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
	if h, ok := strings.CutPrefix(k.String(), "sha256:"); ok && text != "" {
		if sum := sha256.Sum256([]byte(text)); hex.EncodeToString(sum[:]) != h {
			return "", base.UsageError("--explain: its SHA-256 is %x, not the key %s: it explains another key (give the text of aiperf-hash key --explain with the same flags and inputs)", sum, k)
		}
	}
	return text, nil
}

func populateCommand(o *options) *cli.Command {
	var (
		opt           cache.PopulateOptions
		explain, efil string
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
		Flags:     append(flags, explainFlags(&explain, &efil)...),
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
			start := time.Now()
			e, stored, err := cc.Populate(k, c.Args().Tail(), opt)
			if err != nil {
				return err
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

func gcCommand(o *options) *cli.Command {
	var (
		maxSize, maxAge string
		dry             bool
	)
	return &cli.Command{
		Name:  "gc",
		Usage: "remove entries past the age cap, then least recently used ones down to 80% of the size cap",
		Description: "Caps default to the root's config (max-size, max-age); 0 means no cap. Entries being built\n" +
			"and entries whose key is locked are never touched; temporary folders of builders that died are\n" +
			"removed. Prints what it freed; what it could not remove (a read-only root) is named on stderr\n" +
			"and makes it exit 2.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "max-size", Usage: "size cap `SIZE` (500M, 20GiB; 0: no cap, as in ccache, whatever the config says)", Destination: &maxSize},
			&cli.StringFlag{Name: "max-age", Usage: "remove entries unused for `DUR` (30d, 12h; 0: no age cap)", Destination: &maxAge},
			&cli.BoolFlag{Name: "dry-run", Usage: "say what would go, remove nothing", Destination: &dry},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, "no arguments"); err != nil {
				return err
			}
			cc, err := o.open(c)
			if err != nil {
				return err
			}
			defer cc.Close()
			opt := cache.TrimOptions{MaxSize: cc.Config().MaxSize, MaxAge: cc.Config().MaxAge, DryRun: dry}
			if maxSize != "" {
				if opt.MaxSize, err = cache.ParseSize(maxSize); err != nil {
					return base.UsageError("--max-size: %v", err)
				}
			}
			if maxAge != "" {
				if opt.MaxAge, err = cache.ParseAge(maxAge); err != nil {
					return base.UsageError("--max-age: %v", err)
				}
			}
			res, err := cc.Trim(opt)
			var te *cache.TrimError
			if err != nil && !errors.As(err, &te) {
				return err
			}
			verb := "freed"
			if dry {
				verb = "would free"
			}
			w := c.App.Writer
			for _, in := range res.Removed {
				fmt.Fprintf(w, "%s %s  %s  last used %s\n", verb, entryName(in), cache.FormatSize(in.Size), in.LastUsed.Format(time.DateTime))
			}
			fmt.Fprintf(w, "%s %d entries, %s; %d entries, %s remain\n", verb, len(res.Removed), cache.FormatSize(res.Freed), res.Kept, cache.FormatSize(res.KeptSize))
			if res.Garbage > 0 {
				fmt.Fprintf(w, "removed %d abandoned temporary folders, %s\n", res.Garbage, cache.FormatSize(res.GarbageSz))
			}
			if te != nil {
				for _, e := range te.Errs {
					fmt.Fprintf(c.App.ErrWriter, "aiperf-cache: gc: %v\n", e)
				}
				return fmt.Errorf("gc: could not remove %d thing(s) (see above)", len(te.Errs))
			}
			return nil
		},
	}
}

func entryName(in cache.Info) string {
	if in.Key.IsZero() {
		return in.Dir
	}
	return in.Key.String()
}

type lsFile struct {
	Name       string `json:"name"`
	Size       int64  `json:"size"`
	DigestKind string `json:"digest_kind"`
	Digest     string `json:"digest"`
}

type lsLine struct {
	V         int      `json:"v"`
	Key       string   `json:"key,omitempty"`
	Path      string   `json:"path"`
	OK        bool     `json:"ok"`
	Error     string   `json:"error,omitempty"`
	Size      int64    `json:"size"`
	LastUsed  int64    `json:"last_used_unix_ns"`
	Created   int64    `json:"created_unix_ns,omitempty"`
	Tool      string   `json:"tool,omitempty"`
	Files     []lsFile `json:"files,omitempty"`
	StorePath string   `json:"store_path,omitempty"`
}

func lsCommand(o *options) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:  "ls",
		Usage: "list the entries: key, size, last use, files (bad entries say why)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: `one JSON object per line ("v":1)`, Destination: &asJSON},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, "no arguments"); err != nil {
				return err
			}
			cc, err := o.open(c)
			if err != nil {
				return err
			}
			defer cc.Close()
			all, err := cc.List()
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(c.App.Writer)
				for _, in := range all {
					l := lsLine{V: 1, Key: in.Key.String(), Path: in.Dir, OK: in.Err == nil, Size: in.Size, LastUsed: in.LastUsed.UnixNano()}
					if in.Err != nil {
						l.Error = in.Err.Error()
					} else {
						m := in.Manifest
						l.Created, l.Tool = m.CreatedUnixNS, m.Tool
						l.StorePath = in.Dir + "/" + m.Files[0].Name
						for _, f := range m.Files {
							l.Files = append(l.Files, lsFile{f.Name, f.Size, f.DigestKind, f.Digest})
						}
					}
					if err := enc.Encode(l); err != nil {
						return err
					}
				}
				return nil
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 8, 2, ' ', 0)
			for _, in := range all {
				files := ""
				if in.Err != nil {
					files = "BAD: " + in.Err.Error()
				} else {
					names := make([]string, len(in.Manifest.Files))
					for i, f := range in.Manifest.Files {
						names[i] = f.Name
					}
					files = strings.Join(names, " ")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", entryName(in), cache.FormatSize(in.Size), in.LastUsed.Format("2006-01-02 15:04"), files)
			}
			return tw.Flush()
		},
	}
}

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
			var todo []cache.Info
			if len(keys) == 0 {
				if todo, err = cc.List(); err != nil {
					return err
				}
			} else {
				all, err := cc.List()
				if err != nil {
					return err
				}
				for _, k := range keys {
					found := false
					for _, in := range all {
						if in.Key == k {
							todo, found = append(todo, in), true
						}
					}
					if !found {
						todo = append(todo, cache.Info{Key: k, Err: cache.ErrMiss})
					}
				}
			}
			bad := 0
			w := c.App.Writer
			for _, in := range todo {
				err := in.Err
				if err == nil {
					_, err = cc.Verify(in.Key)
				}
				if err == nil {
					fmt.Fprintf(w, "%s: ok\n", entryName(in))
					continue
				}
				bad++
				if errors.Is(err, cache.ErrMiss) && in.Dir == "" {
					fmt.Fprintf(w, "%s: not in the cache\n", entryName(in))
					continue
				}
				fmt.Fprintf(w, "%s: BAD: %s\n", entryName(in), oneLine(err))
				if repair {
					if in.Dir == "" {
						all, _ := cc.List()
						for _, a := range all {
							if a.Key == in.Key {
								in = a
							}
						}
					}
					to, qerr := cc.Quarantine(in)
					if qerr != nil {
						return qerr
					}
					fmt.Fprintf(w, "%s: moved to %s\n", entryName(in), to)
				}
			}
			if bad > 0 {
				return base.No("verify: %d of %d entries bad", bad, len(todo))
			}
			return nil
		},
	}
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

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
			if out == "" && isTerminal(c.App.Writer) {
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
				if f, ok := c.App.Reader.(*os.File); ok && isTerminal(f) {
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
