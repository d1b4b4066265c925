//go:build !unix

package filekind

import (
	"errors"
	"os"
)

func openNonblock(path string) (*os.File, error) { return os.Open(path) }

// Dup is not supported here.
func Dup(fd int, name string) (*os.File, error) {
	return nil, &os.PathError{Op: "dup", Path: name, Err: errors.ErrUnsupported}
}
