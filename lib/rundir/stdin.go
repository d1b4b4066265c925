package rundir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
)

// StdinName names results read from stdin ("-") in messages.
const StdinName = "<stdin>"

// spooled maps the temporary files that hold stdin to StdinName.
var spooled sync.Map

// SpoolStdin returns args with a "-" replaced by a temporary file holding
// all of r: a summary reads its results in several passes, and a pipe can
// be read once. DisplayName names the file StdinName until cleanup removes
// it. "-" given twice is an error.
func SpoolStdin(r io.Reader, args []string) (files []string, cleanup func(), err error) {
	cleanup = func() {}
	files = append([]string(nil), args...)
	if i := slices.Index(files, "-"); i >= 0 && slices.Index(files[i+1:], "-") >= 0 {
		return nil, cleanup, errors.New("- is given twice: stdin can be read only once")
	}
	for i, a := range files {
		if a != "-" {
			continue
		}
		f, err := os.CreateTemp("", "aiperf-report-stdin-*.jsonl")
		if err != nil {
			return nil, cleanup, err
		}
		name := f.Name()
		cleanup = func() { spooled.Delete(name); os.Remove(name) }
		_, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			cleanup()
			return nil, func() {}, fmt.Errorf("read %s: %w", StdinName, err)
		}
		spooled.Store(name, StdinName)
		files[i] = name
	}
	return files, cleanup, nil
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
