//go:build unix

package filekind

import (
	"os"

	"golang.org/x/sys/unix"
)

func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
}

// Dup returns a new file for a duplicate of the process's descriptor fd,
// named name: a pipe the process inherited (/dev/fd/N of a shell's process
// substitution) read through its descriptor, where opening /dev/fd/N anew
// would wait for a writer once the writer is gone.
func Dup(fd int, name string) (*os.File, error) {
	d, err := unix.Dup(fd)
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: name, Err: err}
	}
	unix.CloseOnExec(d)
	return os.NewFile(uintptr(d), name), nil
}
