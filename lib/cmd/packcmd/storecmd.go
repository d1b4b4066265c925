package packcmd

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/pack"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

// The subcommands that read a store: verify, dump, stat, unpack. A store is
// opened without blocking, so a FIFO given as a store is refused at once.

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
		Usage:     "check a store's structure and checksum (exit 1 when it does not verify, 2 when it cannot be read)",
		ArgsUsage: "STORE...",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return base.UsageError("want one or more STORE arguments")
			}
			code := base.ExitOK
			for _, name := range c.Args().Slice() {
				n, err := verify(name)
				if err == nil {
					fmt.Fprintf(c.App.Writer, "%s: ok (%d records)\n", name, n)
					continue
				}
				// A damaged store is a clean "no"; a store that cannot be
				// read at all (missing, a FIFO, unreadable) is trouble.
				if errors.Is(err, store.ErrFormat) || errors.Is(err, store.ErrChecksum) {
					code = max(code, base.ExitNo)
				} else {
					code = base.ExitTrouble
				}
				msg := err.Error()
				if !strings.Contains(msg, name+":") {
					msg = name + ": " + msg
				}
				fmt.Fprintf(c.App.ErrWriter, "aiperf-pack verify: %s\n", msg)
			}
			if code != base.ExitOK {
				return &base.Error{Code: code}
			}
			return nil
		},
	}
}

func verify(name string) (int, error) {
	r, err := store.Open(name, store.OpenOptions{})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return r.Len(), r.Verify()
}

func dumpCommand() *cli.Command {
	var recno int
	var withMeta bool
	return &cli.Command{
		Name:      "dump",
		Usage:     "print the stored request bodies, one per line",
		ArgsUsage: "STORE",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "record", Value: -1, Usage: "print only record `N` (0-based; -1: every record)", Destination: &recno},
			&cli.BoolFlag{Name: "with-meta", Usage: `print {"record","session_id","turn","parent_session","input_tokens","body"} a line, the body as sent`, Destination: &withMeta},
		},
		Action: func(c *cli.Context) error {
			if recno < -1 {
				return base.UsageError("--record %d: want a record number (0-based), or -1 for every record", recno)
			}
			r, _, err := openStore(c)
			if err != nil {
				return err
			}
			defer r.Close()
			if recno >= r.Len() {
				return base.UsageError("--record %d: the store has %d records", recno, r.Len())
			}
			from, to := 0, r.Len()
			if recno >= 0 {
				from, to = recno, recno+1
			}
			if withMeta {
				return pack.DumpMeta(c.App.Writer, r, from, to)
			}
			return dump(c.App.Writer, r, from, to)
		},
	}
}

// dump writes bodies from..to-1, one per line, straight from the mapping:
// memory does not depend on the size of a record.
func dump(w io.Writer, r *store.Reader, from, to int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for i := from; i < to; i++ {
		if _, err := r.WritePayload(bw, i); err != nil {
			return err
		}
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func statCommand() *cli.Command {
	var asJSON, settings bool
	return &cli.Command{
		Name:      "stat",
		Usage:     "describe a store: records, sessions, sizes, format version, timestamps, metadata",
		ArgsUsage: "STORE",
		Description: "--settings prints the settings the store was built with, as aiperf-hash key --explain\n" +
			"describes them (without the input line), so diff says how a store and a key differ;\n" +
			"exit 1 for a store that does not record them (an older aiperf-pack's).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object", Destination: &asJSON},
			&cli.BoolFlag{Name: "settings", Usage: "print only the settings the store was built with", Destination: &settings},
		},
		Action: func(c *cli.Context) error {
			r, name, err := openStore(c)
			if err != nil {
				return err
			}
			defer r.Close()
			if settings {
				s := r.Settings()
				if s == "" {
					return base.No("%s records no settings (packed by an older aiperf-pack)", name)
				}
				_, err := io.WriteString(c.App.Writer, s)
				return err
			}
			if asJSON {
				return writeStatJSON(c.App.Writer, r, name)
			}
			writeStat(c.App.Writer, r, name)
			return nil
		},
	}
}

// contextModes counts the sessions of each context mode, by the flags of
// their first turn ("none" for sessions without one).
func contextModes(r *store.Reader) map[string]int {
	m := map[string]int{record.ContextDeltas: 0, record.ContextMessageArray: 0, "none": 0}
	for s := 0; s < r.NumSessions(); s++ {
		i, ok := r.Lookup(uint32(s), 0)
		if !ok {
			continue
		}
		switch f := r.Entry(i).Flags; {
		case f&store.FlagContextDeltas != 0:
			m[record.ContextDeltas]++
		case f&store.FlagContextMessageArray != 0:
			m[record.ContextMessageArray]++
		default:
			m["none"]++
		}
	}
	return m
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
			if out == "-" {
				return base.UsageError("-o takes a file name; a store is never written to stdout")
			}
			if c.NArg() > 1 {
				return base.UsageError("want at most one STORE.zst argument")
			}
			rc, name, _, err := base.OpenInput(c, c.Args().First())
			if err != nil {
				return err
			}
			defer rc.Close()
			return pack.Unpack(c.Context, out, rc, name)
		},
	}
}

// writeStatJSON prints stat's figures as one JSON object.
func writeStatJSON(w io.Writer, r *store.Reader, name string) error {
	sum, err := pack.Summarize(r)
	if err != nil {
		return err
	}
	st := map[string]any{
		"file":            name,
		"format_version":  r.Version(),
		"records":         sum.Records,
		"sessions":        sum.Sessions,
		"subagents":       sum.Subagents,
		"chains":          sum.Chains,
		"distinct_blocks": sum.DistinctBlocks,
		"file_bytes":      sum.FileBytes,
		"body_bytes":      sum.BodyBytes,
		"timestamps":      r.HasTimestamps(),
		"context_modes":   contextModes(r),
		"meta":            r.Meta(),
		"prefix_cache":    map[string]int64{"prompt_tokens": sum.PromptTokens},
	}
	if ps := storePrefix(r); ps != nil {
		st["prefix_cache"] = ps
		st["distinct_blocks"] = ps.Blocks
	}
	b, _ := json.Marshal(st)
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeStat prints stat's figures a line each, the metadata last in key
// order (the settings as their line count).
func writeStat(w io.Writer, r *store.Reader, name string) {
	fmt.Fprintf(w, "file:           %s\n", name)
	fmt.Fprintf(w, "format version: %d\n", r.Version())
	fmt.Fprintf(w, "records:        %d\n", r.Len())
	fmt.Fprintf(w, "sessions:       %d\n", r.NumSessions())
	fmt.Fprintf(w, "file bytes:     %d\n", r.Size())
	fmt.Fprintf(w, "body bytes:     %d\n", bodyBytes(r))
	fmt.Fprintf(w, "timestamps:     %s\n", yesNo(r.HasTimestamps()))
	cm := contextModes(r)
	fmt.Fprintf(w, "context modes:  %s %d, %s %d, none %d (sessions)\n",
		record.ContextDeltas, cm[record.ContextDeltas], record.ContextMessageArray, cm[record.ContextMessageArray], cm["none"])
	if ps := storePrefix(r); ps != nil {
		ps.print(w, r.Len())
	}
	meta := r.Meta()
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == store.MetaSettings {
			fmt.Fprintf(w, "meta.%-10s %d lines (stat --settings prints them)\n", k+":", strings.Count(meta[k], "\n"))
			continue
		}
		fmt.Fprintf(w, "meta.%-10s %s\n", k+":", strconv.Quote(meta[k]))
	}
}

// bodyBytes is the bytes the bodies send.
func bodyBytes(r *store.Reader) int64 {
	var n int64
	for i := range r.Len() {
		n += int64(r.BodyLen(i))
	}
	return n
}
