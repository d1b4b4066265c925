//go:build !linux

package replay

import (
	"net"
	"syscall"
)

// newSock returns the sock of a new connection.
func newSock(c net.Conn) sock { return newNetSock(c) }

// peekSocket finds nothing here: a TLS connection's idle check looks only
// at the records its TLS layer already holds.
func peekSocket(syscall.RawConn, []byte) (n int, eof bool, err error) { return 0, false, nil }
