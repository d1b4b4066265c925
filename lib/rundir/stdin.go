package rundir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aiperf/toolkit/lib/internal/filekind"
)

// StdinName names results read from stdin ("-") in messages.
const StdinName = "<stdin>"

// openResults opens a results file, refusing at once what is not a
// regular file (filekind.OpenRegular): a named pipe would wait for a
// writer, a device never ends. The error names the file by DisplayName.
func openResults(path string) (*os.File, error) {
	f, err := filekind.OpenRegular(path)
	var nr *filekind.NotRegularError
	if errors.As(err, &nr) {
		nr.Path = DisplayName(path)
	}
	return f, err
}

// spooled maps the temporary files that hold stdin to StdinName.
var spooled sync.Map

// SpoolStdin returns args with a "-" replaced by a temporary file holding
// all of r: a summary reads its results in several passes, and a pipe can
// be read once. A pipe the process inherited, named /dev/fd/N (a shell's
// process substitution, report <(cat FILE)), /proc/self/fd/N or
// /dev/stdin, is spooled alike. Any other argument that is not a regular
// file or a directory (a named pipe, which would wait for a writer, or a
// device such as /dev/zero, which never ends) is refused at once, naming
// it. DisplayName names a spooled file StdinName, or the pipe's path,
// until cleanup removes it. "-" given twice is an error.
func SpoolStdin(r io.Reader, args []string) (files []string, cleanup func(), err error) {
	var temps []string
	cleanup = func() {
		for _, t := range temps {
			spooled.Delete(t)
			os.Remove(t)
		}
	}
	files = append([]string(nil), args...)
	if i := slices.Index(files, "-"); i >= 0 && slices.Index(files[i+1:], "-") >= 0 {
		return nil, cleanup, errors.New("- is given twice: stdin can be read only once")
	}
	for i, a := range files {
		src, name, err := pipeOf(r, a)
		if err == nil && src == nil {
			continue // a regular file or a folder: read where it is
		}
		if err == nil {
			var t string
			t, err = spool(src, name)
			if t != "" {
				temps = append(temps, t)
				files[i] = t
			}
		}
		if err != nil {
			cleanup()
			return nil, func() {}, err
		}
	}
	return files, cleanup, nil
}

// pipeOf returns what to spool for the argument a (nil for a file read in
// place) and its name in messages, or the error that refuses a.
func pipeOf(stdin io.Reader, a string) (io.ReadCloser, string, error) {
	if a == "-" {
		return io.NopCloser(stdin), StdinName, nil
	}
	fi, err := os.Stat(a)
	if err != nil {
		return nil, "", err
	}
	if fi.Mode().IsRegular() || fi.IsDir() {
		return nil, "", nil
	}
	if fd, ok := inheritedFD(a); ok && fi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket) != 0 {
		f, err := filekind.Dup(fd, a)
		return f, a, err
	}
	hint := "results are read from files"
	if fi.Mode()&fs.ModeNamedPipe != 0 {
		hint = "results are read in several passes (give a pipe's results on stdin, -, or as <(cat FILE))"
	}
	return nil, "", fmt.Errorf("%w: %s", &filekind.NotRegularError{Path: a, Mode: fi.Mode()}, hint)
}

// inheritedFD reports whether path names a descriptor of this process
// (/dev/fd/N, /proc/self/fd/N, /dev/stdin), and which.
func inheritedFD(path string) (int, bool) {
	path = filepath.Clean(path)
	if path == "/dev/stdin" {
		return 0, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"} {
		if rest, ok := strings.CutPrefix(path, dir); ok {
			n, err := strconv.Atoi(rest)
			return n, err == nil && n >= 0 && strconv.Itoa(n) == rest
		}
	}
	return 0, false
}

// spool copies all of src into a temporary file, which DisplayName names
// name, closes src and returns the file's path ("" when none was made).
func spool(src io.ReadCloser, name string) (string, error) {
	defer src.Close()
	f, err := os.CreateTemp("", "aiperf-report-stdin-*.jsonl")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	spooled.Store(f.Name(), name)
	if err != nil {
		return f.Name(), fmt.Errorf("read %s: %w", name, err)
	}
	return f.Name(), nil
}

// DisplayName is how a results file is named in messages: its path, or
// StdinName for stdin spooled by SpoolStdin.
func DisplayName(path string) string {
	if n, ok := spooled.Load(path); ok {
		return n.(string)
	}
	return path
}

// DisplayNames lists the display names of files.
func DisplayNames(files []string) []string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = DisplayName(f)
	}
	return names
}

// JoinNames joins the display names of files with ", ".
func JoinNames(files []string) string {
	return strings.Join(DisplayNames(files), ", ")
}

// runLine reports whether a results line carries run info: a run writes
// it on its first record, right after "v" (result.Append).
func runLine(line []byte) bool {
	return bytes.HasPrefix(line, []byte(`{"v":1,"run":{`))
}

// SplitRuns returns files with each file that holds several runs (results
// files concatenated: cat a b | report -) replaced by one temporary file a
// run, so that every check that tells runs apart (of one store, shards of
// one replay, a run given twice) sees each of them. A run starts at a line
// that carries run info; records before the first such line stay with the
// file's first part. DisplayName names a part "FILE lines A-B" until
// cleanup removes the parts.
func SplitRuns(files []string) (out []string, cleanup func(), err error) {
	var temps []string
	cleanup = func() {
		for _, t := range temps {
			spooled.Delete(t)
			os.Remove(t)
		}
	}
	for _, name := range files {
		starts, err := runStarts(name)
		if err != nil {
			cleanup()
			return nil, func() {}, err
		}
		if len(starts) < 2 {
			out = append(out, name)
			continue
		}
		parts, err := splitAt(name, starts)
		temps = append(temps, parts...)
		if err != nil {
			cleanup()
			return nil, func() {}, err
		}
		out = append(out, parts...)
	}
	return out, cleanup, nil
}

// runStarts lists the lines (1-based) of name that carry run info, with
// line 1 first whatever it holds.
func runStarts(name string) ([]int, error) {
	f, err := openResults(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	starts := []int{1}
	for n := 1; ; n++ {
		head, _ := br.Peek(16)
		if len(head) == 0 {
			return starts, nil
		}
		if n > 1 && runLine(head) {
			starts = append(starts, n)
		}
		if err := skipLine(br); err == io.EOF {
			return starts, nil
		} else if err != nil {
			return nil, err
		}
	}
}

// skipLine reads past the next newline (or to the end).
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}

// splitAt copies name's lines into one temporary file a part, each part
// starting at a line of starts.
func splitAt(name string, starts []int) (parts []string, err error) {
	f, err := openResults(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	line := 1
	for k, from := range starts {
		to := math.MaxInt
		if k+1 < len(starts) {
			to = starts[k+1]
		}
		t, err := os.CreateTemp("", "aiperf-report-run-*.jsonl")
		if err != nil {
			return parts, err
		}
		parts = append(parts, t.Name())
		bw := bufio.NewWriterSize(t, 64<<10)
		for ; line < to; line++ {
			b, err := br.ReadSlice('\n')
			for err == bufio.ErrBufferFull {
				if _, werr := bw.Write(b); werr != nil {
					t.Close()
					return parts, werr
				}
				b, err = br.ReadSlice('\n')
			}
			if _, werr := bw.Write(b); werr != nil {
				t.Close()
				return parts, werr
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Close()
				return parts, err
			}
		}
		last := line - 1
		if err := bw.Flush(); err != nil {
			t.Close()
			return parts, err
		}
		if err := t.Close(); err != nil {
			return parts, err
		}
		span := fmt.Sprintf("lines %d-%d", from, last)
		if to == math.MaxInt {
			span = fmt.Sprintf("lines %d-", from)
		}
		spooled.Store(t.Name(), DisplayName(name)+" "+span)
	}
	return parts, nil
}
