// Package filekind names the type of a file for messages, one wording for the
// whole module: "trace.jsonl: not a regular file (a named pipe)" from the
// trace reader reads the same as "refusing to replace out: ... it is a named
// pipe" from atomicfile.
package filekind

import "io/fs"

// Of returns the type of a file of mode m as a noun phrase with its article:
// "a regular file", "a directory", "a named pipe", "a socket", "a character
// device", "a block device", "a symbolic link", "an irregular file", or "a
// file of type <m.Type()>" for anything else.
func Of(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0: // before ModeDevice: a character device has both bits
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeIrregular != 0:
		return "an irregular file"
	default:
		return "a file of type " + t.String()
	}
}
