package filekind

import (
	"errors"
	"io/fs"
	"os"
)

// ErrNotRegular is what OpenRegular's error wraps for a file that is not a
// regular one.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError refuses a file that is not a regular one: "NAME: a named
// pipe, not a regular file".
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return e.Path + ": " + Of(e.Mode) + ", not a regular file"
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// OpenRegular opens path for reading and refuses, at once, anything but a
// regular file (NotRegularError): opening a named pipe waits for a writer,
// forever without one, and a device such as /dev/zero never ends. The open
// itself does not wait (O_NONBLOCK, where the system has it), and the type
// is the opened file's, so a path replaced after a check is caught too.
func OpenRegular(path string) (*os.File, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}
