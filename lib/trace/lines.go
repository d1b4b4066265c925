package trace

import (
	"io"

	"github.com/aiperf/toolkit/lib/internal/jsonl"
)

// DefaultMaxLineBytes is the longest trace line read when
// [Options.MaxLineBytes] is 0: generous (payload rows and raw bodies with
// base64 images reach tens of MiB), and a bound on what one line can make
// a reader hold.
const DefaultMaxLineBytes = jsonl.DefaultMaxLine

// LineTooLongError is the error (inside an [*Error] with the line number)
// for a line longer than [Options.MaxLineBytes].
type LineTooLongError = jsonl.LineTooLongError

// lineReader is the module's line reader: lines ending in "\n" or "\r\n",
// counted from 1, at most the maximum length, a leading BOM dropped.
type lineReader = jsonl.Reader

func newLineReader(r io.Reader, max int) *lineReader { return jsonl.NewReader(r, max) }

func newLimitLines(r io.Reader, name string, max int) io.Reader {
	return jsonl.NewLimitLines(r, name, max)
}
