package digest

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"runtime"
	"sync"
)

// PathFunc digests one named input (Hasher.Path, or a caller's own rule).
type PathFunc func(ctx context.Context, name string) (Digest, error)

// Each digests names on up to GOMAXPROCS goroutines with path (nil:
// h.Path) and hands the results to emit in order, each as soon as it and
// all before it are done. "-" is stdin, read with h.Reader when its turn
// comes in order (so a second "-" reads the empty rest, as in sha256sum).
// When ctx is done, Each stops emitting and returns once its goroutines
// have.
func (h *Hasher) Each(ctx context.Context, names []string, stdin io.Reader, path PathFunc, emit func(i int, d Digest, err error)) {
	if path == nil {
		path = h.Path
	}
	type result struct {
		d   Digest
		err error
	}
	n := len(names)
	res := make([]result, n)
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := range jobs {
				d, err := path(ctx, names[i])
				res[i] = result{d, err}
				close(done[i])
			}
		})
	}
	go func() {
		defer close(jobs)
		for i, name := range names {
			if name == "-" {
				continue
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer wg.Wait()
	for i, name := range names {
		if name == "-" {
			s, err := h.Reader(ctx, stdin)
			emit(i, Digest{Kind: Stream, Sum: s}, err)
			continue
		}
		select {
		case <-done[i]:
			emit(i, res[i].d, res[i].err)
		case <-ctx.Done():
			return
		}
	}
}

// ErrNoChecksumLines: a checksum list had no properly formatted line.
var ErrNoChecksumLines = errors.New("no properly formatted checksum lines found")

// CheckOptions configures Check. The callbacks may be nil.
type CheckOptions struct {
	// FromStdin tells that the list is standard input (see NewListReader).
	FromStdin bool
	// Stdin is what a listed name "-" reads.
	Stdin io.Reader
	// IgnoreMissing skips listed files that do not exist.
	IgnoreMissing bool
	// OnMalformed is told of each improperly formatted line.
	OnMalformed func(line int, err error)
	// OnFile is told, in the list's order, of each listed file checked:
	// whether its digest matched, or why it could not be read.
	OnFile func(e ListEntry, match bool, err error)
}

// CheckResult counts what Check found.
type CheckResult struct {
	Malformed  int // improperly formatted lines
	Unreadable int // listed files that could not be read
	Mismatched int // files whose digest is not the listed one
	Verified   int // files read (matching or not)
}

// Check checks the sha256sum list read from list (sha256sum -c): every
// listed file is digested as Path does, reading its bytes whatever the
// memo knows (Check sets h.Refresh), and compared with the listed digest.
// Its error is one of reading the list, ErrNoChecksumLines, or ctx's;
// files that differ or cannot be read are counted, not errors.
func (h *Hasher) Check(ctx context.Context, list io.Reader, opt CheckOptions) (CheckResult, error) {
	var res CheckResult
	lr := NewListReader(list, opt.FromStdin)
	var entries []ListEntry
	for {
		e, err := lr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, ErrListFormat) {
			res.Malformed++
			if opt.OnMalformed != nil {
				opt.OnMalformed(e.Line, err)
			}
			continue
		}
		if err != nil {
			return res, err
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return res, ErrNoChecksumLines
	}
	h.Refresh = true
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	onFile := opt.OnFile
	if onFile == nil {
		onFile = func(ListEntry, bool, error) {}
	}
	h.Each(ctx, names, opt.Stdin, nil, func(i int, d Digest, err error) {
		switch {
		case errors.Is(err, context.Canceled):
		case err != nil && opt.IgnoreMissing && errors.Is(err, fs.ErrNotExist):
		case err != nil:
			res.Unreadable++
			onFile(entries[i], false, err)
		default:
			res.Verified++
			ok := d.Sum == entries[i].Sum
			if !ok {
				res.Mismatched++
			}
			onFile(entries[i], ok, nil)
		}
	})
	return res, ctx.Err()
}
