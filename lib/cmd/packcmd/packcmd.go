// Package packcmd is the aiperf-pack command: records JSONL in, one store file out.
package packcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
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
		&cli.StringSliceFlag{Name: "extra", Usage: "merge `K=V` (V as JSON if valid, else a string) or a JSON object into every formatted body; repeatable", Destination: &o.extra},
		&cli.PathFlag{Name: "inputs-json", Usage: "also write the Python aiperf's inputs.json to `FILE`", Destination: &o.inputsJSON},
		&cli.BoolFlag{Name: "compress", Usage: "write a zstd stream of the store (for shipping; `aiperf-pack unpack` restores it)", Destination: &o.compress},
		&cli.BoolFlag{Name: "no-end-marker", Usage: "accept record streams without the end line (hand-made input)", Destination: &o.noEndMarker},
		&cli.BoolFlag{Name: "v", Usage: "print a summary on stderr", Destination: &o.verbose},
	)
	return &cli.App{
		Name:      "aiperf-pack",
		Usage:     "pack records JSONL into one store file (request bodies formatted once)",
		ArgsUsage: "[records.jsonl|- ...]",
		Description: "Reads records (aiperf-tokenize output) from the files given, or stdin, merges shards by their\n" +
			"line field and writes one .aipk store. Subcommands inspect a store.",
		Flags: flags,
		Action: func(c *cli.Context) error {
			return runPack(c, &o)
		},
		Commands: []*cli.Command{verifyCommand(), dumpCommand(), statCommand(), unpackCommand()},
	}
}

func runPack(c *cli.Context, o *options) error {
	if o.out == "" {
		return base.UsageError("-o FILE is required (a store is never written to stdout)")
	}
	for _, e := range o.extra.Value() {
		fs, err := request.ParseExtra(e)
		if err != nil {
			return base.UsageError("%v", err)
		}
		o.req.Extra = append(o.req.Extra, fs...)
	}
	if err := o.req.Validate(); err != nil {
		return base.UsageError("--endpoint: %v", err)
	}
	if !o.req.Streaming && o.req.IncludeUsage {
		return base.UsageError("--include-usage needs --streaming")
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
		rc, name, err := base.Open(c, n)
		if err != nil {
			return err
		}
		defer rc.Close()
		if f, ok := rc.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				total += fi.Size()
			}
		}
		inputs = append(inputs, pack.Input{Name: name, R: base.CountingReader{R: rc, N: &read}})
	}
	prog := base.NewProgress(c.App.ErrWriter)
	defer prog.Done()
	storePath := o.out
	if o.compress {
		storePath = filepath.Join(filepath.Dir(o.out), "."+filepath.Base(o.out)+".store-tmp")
		defer os.Remove(storePath)
	}
	st, err := pack.Run(c.Context, inputs, storePath, pack.Options{Request: o.req, NoEndMarker: o.noEndMarker,
		Progress: func(n int) { prog.Printf("aiperf-pack %s %d records", base.Bar(read.Load(), total), n) }})
	prog.Done()
	if err != nil {
		return classify(err)
	}
	if o.inputsJSON != "" {
		if err := writeInputsJSON(o.inputsJSON, storePath); err != nil {
			os.Remove(storePath)
			return err
		}
	}
	if o.compress {
		if err := pack.Compress(o.out, storePath); err != nil {
			return err
		}
	}
	if o.verbose {
		fmt.Fprintf(c.App.ErrWriter, "aiperf-pack: %s: %d records, %d sessions, %d body bytes\n", o.out, st.Records, st.Sessions, st.BodyBytes)
	}
	return nil
}

func writeInputsJSON(dst, storePath string) error {
	r, err := store.Open(storePath, store.OpenOptions{})
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := atomicfile.Create(dst)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := pack.WriteInputsJSON(f, r); err != nil {
		return err
	}
	return f.Commit()
}

// classify maps record/format errors to exit 2 with their message unchanged.
func classify(err error) error {
	var re *record.Error
	if errors.As(err, &re) {
		return &base.Error{Code: base.ExitTrouble, Err: err}
	}
	return err
}

func openStore(c *cli.Context) (*store.Reader, string, error) {
	if c.NArg() != 1 {
		return nil, "", base.UsageError("want exactly one STORE argument")
	}
	name := c.Args().First()
	r, err := store.Open(name, store.OpenOptions{})
	if err != nil {
		return nil, name, err
	}
	return r, name, nil
}

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check a store's structure and checksum (exit 1 when it does not verify)",
		ArgsUsage: "STORE...",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return base.UsageError("want one or more STORE arguments")
			}
			bad := 0
			for _, name := range c.Args().Slice() {
				if _, err := os.Stat(name); err != nil {
					return err
				}
				r, err := store.Open(name, store.OpenOptions{})
				if err == nil {
					err = r.Verify()
					n := r.Len()
					r.Close()
					if err == nil {
						fmt.Fprintf(c.App.Writer, "%s: ok (%d records)\n", name, n)
						continue
					}
				}
				bad++
				msg := err.Error()
				if !strings.HasPrefix(msg, name+":") {
					msg = name + ": " + msg
				}
				fmt.Fprintf(c.App.ErrWriter, "aiperf-pack verify: %s\n", msg)
			}
			if bad > 0 {
				return base.No("")
			}
			return nil
		},
	}
}

func dumpCommand() *cli.Command {
	var recno int
	return &cli.Command{
		Name:      "dump",
		Usage:     "print the stored request bodies, one per line",
		ArgsUsage: "STORE",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "record", Value: -1, Usage: "print only record `N` (0-based)", Destination: &recno},
		},
		Action: func(c *cli.Context) error {
			r, _, err := openStore(c)
			if err != nil {
				return err
			}
			defer r.Close()
			if recno >= r.Len() {
				return base.UsageError("--record %d: the store has %d records", recno, r.Len())
			}
			w := c.App.Writer
			from, to := 0, r.Len()
			if recno >= 0 {
				from, to = recno, recno+1
			}
			buf := make([]byte, 0, 1<<20)
			for i := from; i < to; i++ {
				buf = append(buf, r.Payload(i)...)
				buf = append(buf, '\n')
				if len(buf) >= 1<<20 {
					if _, err := w.Write(buf); err != nil {
						return err
					}
					buf = buf[:0]
				}
			}
			_, err = w.Write(buf)
			return err
		},
	}
}

func statCommand() *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:      "stat",
		Usage:     "describe a store: records, sessions, sizes, format version, timestamps, metadata",
		ArgsUsage: "STORE",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print one JSON object", Destination: &asJSON}},
		Action: func(c *cli.Context) error {
			r, name, err := openStore(c)
			if err != nil {
				return err
			}
			defer r.Close()
			st := map[string]any{
				"file":           name,
				"format_version": r.Version(),
				"records":        r.Len(),
				"sessions":       r.NumSessions(),
				"file_bytes":     r.Size(),
				"body_bytes":     r.DataBytes(),
				"timestamps":     r.HasTimestamps(),
				"meta":           r.Meta(),
			}
			if asJSON {
				b, _ := json.Marshal(st)
				_, err := fmt.Fprintf(c.App.Writer, "%s\n", b)
				return err
			}
			w := c.App.Writer
			fmt.Fprintf(w, "file:           %s\n", name)
			fmt.Fprintf(w, "format version: %d\n", r.Version())
			fmt.Fprintf(w, "records:        %d\n", r.Len())
			fmt.Fprintf(w, "sessions:       %d\n", r.NumSessions())
			fmt.Fprintf(w, "file bytes:     %d\n", r.Size())
			fmt.Fprintf(w, "body bytes:     %d\n", r.DataBytes())
			fmt.Fprintf(w, "timestamps:     %s\n", yesNo(r.HasTimestamps()))
			meta := r.Meta()
			keys := make([]string, 0, len(meta))
			for k := range meta {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(w, "meta.%-10s %s\n", k+":", strconv.Quote(meta[k]))
			}
			return nil
		},
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func unpackCommand() *cli.Command {
	var out string
	return &cli.Command{
		Name:      "unpack",
		Usage:     "turn a --compress stream back into a store (verified before it is written)",
		ArgsUsage: "[STORE.zst|-]",
		Flags:     []cli.Flag{&cli.PathFlag{Name: "o", Usage: "output store `FILE` (required)", Destination: &out}},
		Action: func(c *cli.Context) error {
			if out == "" {
				return base.UsageError("-o FILE is required")
			}
			rc, name, err := base.Open(c, c.Args().First())
			if err != nil {
				return err
			}
			defer rc.Close()
			return pack.Unpack(out, io.Reader(rc), name)
		},
	}
}
