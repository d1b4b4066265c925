package hashcmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/shape"
	"github.com/aiperf/toolkit/lib/digest"
	"github.com/aiperf/toolkit/lib/trace"
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
of the two stages that shapes the store's bytes, and a salt with the records
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
they cannot change a byte of the store.`

type keyOptions struct {
	memo    memoOptions
	tok     shape.Tokenize
	tokRun  shape.TokenizeRun
	pack    shape.Pack
	packRun shape.PackRun
	explain bool
	verbose bool
}

// keyFlags are the flags of key: the stages' (their -v is key's own) and
// key's.
func keyFlags(o *keyOptions) []cli.Flag {
	var flags []cli.Flag
	flags = append(flags, shape.TokenizeFlags(&o.tok)...)
	flags = append(flags, withoutV(shape.TokenizeRunFlags(&o.tokRun))...)
	flags = append(flags, shape.PackFlags(&o.pack)...)
	flags = append(flags, withoutV(shape.PackRunFlags(&o.packRun))...)
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
	chk, err := o.tok.Check()
	if err != nil {
		return "", err
	}
	req, err := o.pack.Check()
	if err != nil {
		return "", err
	}
	// The limits leave the key alone, but a stage refuses a bad one, and
	// a key for a command line the stage refuses is no use.
	if err := o.tokRun.Check(); err != nil {
		return "", err
	}
	if _, err := o.packRun.Check(); err != nil {
		return "", err
	}
	var memoNote string
	r.h.Memo, memoNote = openMemo(&o.memo)
	if o.verbose {
		if memoNote != "" {
			r.warnf("digest memo off: %s", memoNote)
		}
		r.h.OnDone = r.logEvent
	}

	tok, err := shape.TokenizerIdentity(ctx, &r.h, &o.tok)
	if err != nil {
		return "", err
	}

	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	var head *headReader
	if slices.Contains(inputs, "-") {
		if f, ok := r.stdin.(*os.File); ok && isTerminal(f) {
			return "", base.UsageError("key: the trace would be read from a terminal: give INPUT (or pipe it in)")
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
		return "", err
	}
	if failed {
		return "", &base.Error{Code: base.ExitTrouble} // each error was printed
	}

	typ := o.tok.Type
	if typ == "" {
		// Keyed by the format tokenize detects, so that naming it with
		// --type gives the same key as leaving it out.
		if typ, err = detectType(inputs[0], head, o.tokRun.MaxLineBytes); err != nil {
			return "", err
		}
	}
	if shape.NeedsModel(typ) && req.Model == "" {
		return "", base.UsageError("key: --model is required: aiperf-pack needs it to format the prompts and messages of a %s trace (and refuses to pack them without it)", typ)
	}

	b := cachekey.New(shape.Salt())
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

// headMax bounds the head of stdin key keeps to detect the trace's format:
// a first record longer than that (or a pretty-printed inputs_json document
// longer than that) needs --type.
const headMax = 8 << 20

// headReader reads r and keeps its first headMax bytes.
type headReader struct {
	r    io.Reader
	head []byte
	all  bool // head holds the whole stream
}

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if keep := min(n, headMax-len(h.head)); keep > 0 {
		h.head = append(h.head, p[:keep]...)
	}
	if err == io.EOF && len(h.head) < headMax {
		h.all = true
	}
	return n, err
}

// errHeadEnd stops a detection that reads past the head key kept.
var errHeadEnd = fmt.Errorf("its first %d MiB do not tell its format", headMax>>20)

// detectType names the format of the trace at name ("-": the head of stdin
// that h kept) as aiperf-tokenize detects it, with its words when it
// cannot (tokenize would refuse the trace).
func detectType(name string, h *headReader, maxLine int) (string, error) {
	opt := trace.Options{MaxLineBytes: maxLine}
	var (
		tr  *trace.Reader
		err error
	)
	if name == "-" {
		var in io.Reader = bytes.NewReader(h.head)
		if !h.all {
			in = io.MultiReader(in, errReader{errHeadEnd})
		}
		tr, err = trace.NewReader(in, "<stdin>", opt)
		if errors.Is(err, errHeadEnd) {
			return "", base.UsageError("key: the trace on stdin: %v: give --type", errHeadEnd)
		}
	} else {
		tr, err = trace.Open(name, opt)
	}
	if err != nil {
		return "", err
	}
	defer tr.Close()
	return tr.Type(), nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// traceInput digests a trace input as aiperf-tokenize reads it: a file (or
// a link to one) by its bytes; a directory by the files it takes from it
// (see traceFiles), under the directory rule (kind "listed").
func traceInput(ctx context.Context, h *digest.Hasher, name string) (digest.Digest, error) {
	fi, err := os.Stat(name)
	if err != nil || !fi.IsDir() {
		return h.Path(ctx, name)
	}
	files, err := traceFiles(name)
	if err != nil {
		return digest.Digest{}, err
	}
	if len(files) == 0 {
		// tokenize refuses it; and every such folder would share one key
		return digest.Digest{}, &fs.PathError{Op: "read", Path: name, Err: errors.New("no *.jsonl file below it: aiperf-tokenize reads nothing from it")}
	}
	s, err := h.Listed(ctx, name, files)
	return digest.Digest{Kind: digest.Listed, Sum: s}, err
}

// traceFiles lists, relative to dir and '/'-separated, the files
// aiperf-tokenize may read from a trace directory (trace.DirFiles). It
// recurses in every mode: a raw_payload directory reads only its top
// level, so a nested *.jsonl changes its key but not its store (a miss,
// never a wrong hit).
func traceFiles(dir string) ([]string, error) {
	files, err := trace.DirFiles(dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(files))
	for i, p := range files {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil, err
		}
		out[i] = filepath.ToSlash(rel)
	}
	return out, nil
}
