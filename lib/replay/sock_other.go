//go:build !linux

package replay

import "net"

// newSock returns the sock of a new connection.
func newSock(c net.Conn) sock { return newNetSock(c) }

// peekConn cannot read without waiting here: TLS connections are not
// checked when idle (netSock.checkIdle).
type peekConn struct {
	net.Conn
	look bool
}

// underTLS returns c.
func underTLS(c net.Conn) net.Conn { return c }
