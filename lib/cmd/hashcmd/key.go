package hashcmd

import (
	"bufio"
	"context"
	"errors"
	"os"
	"slices"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/stagekey"
	"github.com/aiperf/toolkit/lib/cmd/stagekey/tokenizekey"
	"github.com/aiperf/toolkit/lib/digest"
	"github.com/aiperf/toolkit/lib/internal/term"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/tokenizer/identity"
	"github.com/urfave/cli/v2"
)

const keyDescription = `Prints the cache key of the store that aiperf-tokenize and aiperf-pack would
make from the INPUTs (trace files or directories; "-" or none reads standard
input) with these flags: one line, sha256:<64 hex>, the SHA-256 of a
canonical description of the computation. --explain prints that description
instead (pipe it to sha256sum to get the key's hex), one field per line,
sorted after its first line, so diff of two explanations says why two keys
differ.

The description holds the content digest of each input (through the digest
memo, so an unchanged input costs a stat; a directory by the files
aiperf-tokenize reads from it: its *.jsonl files, links followed wherever
they lead, under the directory rule of aiperf-hash digest), the tokenizer's identity (the
SHA-256 of its files as they are on disk, its name and revision; the builtin
one by the digest of its embedded bytes, without decoding them), every flag
of the two stages that shapes the store's bytes (--template by the SHA-256
of the template file's bytes, not its name), and a salt with the records
and store format versions and a version of each algorithm that shapes bytes
(trace reading, synthesis, corpus, body formatting, compression).

The flags are the stages' own definitions, with their checks: what a stage
would refuse, key refuses in the same words (a key for a build that can
only fail is no use), --model missing for a trace whose prompts or messages
aiperf-pack formats included. Values are keyed as the stages use them, so a
flag given its default value keys as its absence: without --type the trace
is keyed by the format aiperf-tokenize detects in it (from the first INPUT;
on stdin, from its first 8 MiB), and --block-size 0 is that format's own.
Their other flags (-o, --inputs-json, --verify, --max-line-bytes,
--max-line, --no-end-marker) are accepted, checked and left out of the key:
they cannot change a byte of the store.

key also leaves a note of the key in the cache root (keys/XX/HEX: the
description and the INPUTs' names; not with --no-memo), from which
aiperf-cache populate and ensure check a build's store against the key
without --explain, and name the trace in the entry.`

type keyOptions struct {
	memo    memoOptions
	tok     tokenizekey.Tokenize
	tokRun  tokenizekey.TokenizeRun
	pack    stagekey.Pack
	packRun stagekey.PackRun
	explain bool
	verbose bool
}

// keyFlags are the flags of key: the stages' (their -v is key's own) and
// key's.
func keyFlags(o *keyOptions) []cli.Flag {
	var flags []cli.Flag
	flags = append(flags, tokenizekey.TokenizeFlags(&o.tok)...)
	flags = append(flags, withoutV(tokenizekey.TokenizeRunFlags(&o.tokRun))...)
	flags = append(flags, stagekey.PackFlags(&o.pack)...)
	flags = append(flags, withoutV(stagekey.PackRunFlags(&o.packRun))...)
	flags = append(flags,
		&cli.BoolFlag{Name: "explain", Usage: "print the canonical description that is hashed instead of the key", Destination: &o.explain},
		&cli.BoolFlag{Name: "v", Usage: "tell on stderr how each digest was obtained (memo or read)", Destination: &o.verbose},
	)
	return append(flags, memoFlags(&o.memo)...)
}

func withoutV(flags []cli.Flag) []cli.Flag {
	return slices.DeleteFunc(flags, func(f cli.Flag) bool { return f.Names()[0] == "v" })
}

func keyCommand(global *memoOptions) *cli.Command {
	var o keyOptions
	o.memo.global = global
	return &cli.Command{
		Name:        "key",
		Usage:       "print the cache key of the store the stages would make from INPUTs with these flags",
		ArgsUsage:   "[flags of aiperf-tokenize and aiperf-pack] [INPUT|- ...]",
		Description: keyDescription,
		Flags:       keyFlags(&o),
		Action: func(c *cli.Context) error {
			r := &digestRun{o: &digestOptions{verbose: o.verbose}, stdin: c.App.Reader, stdout: bufio.NewWriterSize(c.App.Writer, 4<<10), stderr: c.App.ErrWriter, name: c.App.Name}
			defer r.stdout.Flush()
			text, err := describe(c.Context, r, &o, c.Args().Slice())
			r.flushMemo()
			if err != nil {
				return err
			}
			r.leaveNote(&o.memo, text, c.Args().Slice(), o.verbose)
			if o.explain {
				r.print(text)
				return nil
			}
			r.print(cachekey.KeyOf(text).String() + "\n")
			return nil
		},
	}
}

// describe checks the flags as the stages do, digests the inputs and the
// tokenizer and returns the canonical description.
func describe(ctx context.Context, r *digestRun, o *keyOptions, inputs []string) (string, error) {
	chk, req, err := o.check()
	if err != nil {
		return "", err
	}
	r.useMemo(&o.memo, o.verbose)

	tok, err := identity.Of(ctx, &r.h, o.tok.Tokenizer, o.tok.IsBuiltin())
	if err != nil {
		return "", err
	}

	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	digests, head, err := digestInputs(ctx, r, inputs)
	if err != nil {
		return "", err
	}

	typ := o.tok.Type
	if typ == "" {
		// Keyed by the format tokenize detects, so that naming it with
		// --type gives the same key as leaving it out.
		if typ, err = detectType(inputs[0], head, o.tokRun.MaxLineBytes); err != nil {
			return "", err
		}
	}
	if tokenizekey.NeedsModel(typ) && req.Model == "" {
		return "", base.UsageError("key: --model is required: aiperf-pack needs it to format the prompts and messages of a %s trace (and refuses to pack them without it)", typ)
	}

	b := cachekey.New(cachekey.CurrentSalt())
	for _, f := range append(o.tok.Fields(chk, typ), o.pack.Fields(req)...) {
		if f.IsList {
			b.List(f.Name, f.List)
		} else {
			b.Field(f.Name, f.Value)
		}
	}
	b.Tokenizer(tok)
	for _, d := range digests {
		b.Input(d)
	}
	return b.Explain()
}

// check checks the flags of both stages as the stages do.
func (o *keyOptions) check() (tokenizekey.Checked, request.Options, error) {
	chk, err := o.tok.Check()
	if err != nil {
		return chk, request.Options{}, err
	}
	req, err := o.pack.Check()
	if err != nil {
		return chk, req, err
	}
	// The limits leave the key alone, but a stage refuses a bad one, and
	// a key for a command line the stage refuses is no use.
	if err := o.tokRun.Check(); err != nil {
		return chk, req, err
	}
	_, err = o.packRun.Check()
	return chk, req, err
}

// digestInputs digests the trace inputs in order, as aiperf-tokenize reads
// them; head keeps the start of stdin when it is one of them.
func digestInputs(ctx context.Context, r *digestRun, inputs []string) ([]digest.Digest, *headReader, error) {
	var head *headReader
	if slices.Contains(inputs, "-") {
		if f, ok := r.stdin.(*os.File); ok && term.Is(f) {
			return nil, nil, base.UsageError("key: the trace would be read from a terminal: give INPUT (or pipe it in)")
		}
		// Its head is kept for detecting its format: stdin is read once.
		head = &headReader{r: r.stdin}
		r.stdin = head
	}
	failed := false
	digests := make([]digest.Digest, 0, len(inputs))
	r.path = func(ctx context.Context, name string) (digest.Digest, error) { return traceInput(ctx, &r.h, name) }
	r.digestAll(ctx, inputs, func(_ int, res result) {
		if res.err != nil {
			failed = true
			if !errors.Is(res.err, context.Canceled) {
				r.warnf("%v", pathMessage(res.err))
			}
			return
		}
		if res.d.Kind == digest.Stream {
			// aiperf-tokenize reads a trace on stdin as it reads the same
			// bytes in a file: one key for both.
			res.d.Kind = digest.File
		}
		digests = append(digests, res.d)
	})
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if failed {
		return nil, nil, &base.Error{Code: base.ExitTrouble} // each error was printed
	}
	return digests, head, nil
}
