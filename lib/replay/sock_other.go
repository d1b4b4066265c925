//go:build !linux

package replay

import "net"

// newSock returns the sock of a new connection.
func newSock(c net.Conn) sock { return &netSock{c: c} }
