package cachecmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aiperf/toolkit/lib/cache"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/urfave/cli/v2"
)

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
			return printTrim(c, res, te, dry)
		},
	}
}

// printTrim prints what gc freed (or, dry, would free), and names on
// stderr what it could not remove.
func printTrim(c *cli.Context, res cache.TrimResult, te *cache.TrimError, dry bool) error {
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
}

type lsFile struct {
	Name       string `json:"name"`
	Size       int64  `json:"size"`
	DigestKind string `json:"digest_kind"`
	Digest     string `json:"digest"`
	Model      string `json:"model,omitempty"`
	Endpoint   string `json:"endpoint,omitempty"`
}

// lsLine is an entry of ls --json. Model and Endpoint are its store's
// (its first file's, as the manifest records them), Inputs the names of
// the inputs its key digested (when populate or ensure knew them).
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
	Model     string   `json:"model,omitempty"`
	Endpoint  string   `json:"endpoint,omitempty"`
	Inputs    []string `json:"inputs,omitempty"`
	Files     []lsFile `json:"files,omitempty"`
	StorePath string   `json:"store_path,omitempty"`
}

func lsCommand(o *options) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:  "ls",
		Usage: "list the entries: key, size, last use, the store's model and endpoint, the trace, files (bad entries say why)",
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
				return lsJSON(c.App.Writer, all)
			}
			return lsText(c.App.Writer, all)
		},
	}
}

// lsJSON writes one lsLine per entry.
func lsJSON(w io.Writer, all []cache.Info) error {
	enc := json.NewEncoder(w)
	for _, in := range all {
		l := lsLine{V: 1, Key: in.Key.String(), Path: in.Dir, OK: in.Err == nil, Size: in.Size, LastUsed: in.LastUsed.UnixNano()}
		if in.Err != nil {
			l.Error = in.Err.Error()
		} else {
			m := in.Manifest
			l.Created, l.Tool, l.Inputs = m.CreatedUnixNS, m.Tool, m.Inputs
			l.Model, l.Endpoint = m.Files[0].Model, m.Files[0].Endpoint
			l.StorePath = in.Dir + "/" + m.Files[0].Name
			for _, f := range m.Files {
				l.Files = append(l.Files, lsFile{f.Name, f.Size, f.DigestKind, f.Digest, f.Model, f.Endpoint})
			}
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

// lsText writes a table: key, size, last use, the store's model and
// endpoint, the trace (the base names of the key's inputs), files (or why
// the entry is bad); "-" where the manifest does not say (older ones, a
// file that is no store, a key not from aiperf-hash).
func lsText(w io.Writer, all []cache.Info) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, in := range all {
		model, endpoint, trace, files := "-", "-", "-", ""
		if in.Err != nil {
			files = "BAD: " + in.Err.Error()
		} else {
			m := in.Manifest
			model, endpoint = orDash(m.Files[0].Model), orDash(m.Files[0].Endpoint)
			if len(m.Inputs) > 0 {
				names := make([]string, len(m.Inputs))
				for i, n := range m.Inputs {
					names[i] = filepath.Base(n)
				}
				trace = strings.Join(names, ",")
			}
			names := make([]string, len(m.Files))
			for i, f := range m.Files {
				names[i] = f.Name
			}
			files = strings.Join(names, " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", entryName(in), cache.FormatSize(in.Size), in.LastUsed.Format("2006-01-02 15:04"),
			cell(model), cell(endpoint), cell(trace), files)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell keeps a table cell on one column: tabs and spaces would split it.
func cell(s string) string { return strings.Join(strings.Fields(s), "_") }
