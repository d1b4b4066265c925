// Package jsonl reads line-oriented input for the module's decoders: the
// traces (lib/trace), the tokenized records (lib/record) and a replay's
// per-request records (lib/result) all read lines through Reader and report
// bad input with Error.
//
// A line ends in "\n" or "\r\n" (the last may end with the input), is
// counted from 1 and is at most a maximum length; a UTF-8 byte order mark at
// the start of the input is dropped. Record skips blank lines (counting
// them), and AfterEnd checks that nothing but blank lines follows a
// format's end line.
package jsonl

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultMaxLine is the longest line a Reader returns unless told otherwise:
// far above any real line (a 1M-token prompt is about 4 MB of JSON, payload
// rows with base64 images reach tens of MiB), low enough that input without
// newlines fails before it exhausts memory.
const DefaultMaxLine = 256 << 20

// Error is bad input at a place: its message has the shape
// "file:line: field: problem", with the parts that do not apply left out
// ("line N: " when there is no file name).
type Error struct {
	File  string
	Line  int64  // 1-based; 0 when it does not apply
	Field string // JSON path or CSV column, e.g. "hash_ids[3]"; "" when none
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("invalid")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrLineTooLong matches (errors.Is) every *LineTooLongError.
var ErrLineTooLong = errors.New("line too long")

// LineTooLongError is the error (inside an *Error with the line number) for
// a line longer than the reader's maximum.
type LineTooLongError struct{ Max int }

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("the line is longer than %d bytes", e.Max)
}

// Is reports whether target is ErrLineTooLong.
func (e *LineTooLongError) Is(target error) bool { return target == ErrLineTooLong }

// ErrAfterEnd is the error (inside an *Error with the line number) for a
// line after a format's end line: two streams concatenated, say.
var ErrAfterEnd = errors.New("data after the end line")
