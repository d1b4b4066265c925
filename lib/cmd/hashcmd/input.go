package hashcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/digest"
	"github.com/aiperf/toolkit/lib/trace"
)

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
