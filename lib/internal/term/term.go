// Package term tells a terminal from every other file.
//
// A terminal is a file the kernel answers a terminal-attributes request for
// (tcgetattr(3)), not merely a character device: /dev/null and /dev/zero are
// character devices and not terminals, so output sent to /dev/null is data
// like any other, and progress lines and refusals meant for a person at a
// keyboard do not fire.
package term

// fder is what *os.File offers: a descriptor to ask the kernel about.
type fder interface{ Fd() uintptr }

// Is reports whether v (an io.Reader or io.Writer, typically) is an open
// file that is a terminal. Anything without a file descriptor is not.
func Is(v any) bool {
	f, ok := v.(fder)
	if !ok || f == nil {
		return false
	}
	return isTerminal(f)
}
