package replay

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
)

// sock is what a request does with its connection besides deadlines: read
// the response, and write the request's pieces (head and body parts) in one
// go.
type sock interface {
	Read(p []byte) (int, error)
	// writeParts writes every byte of v, in order, and returns the error
	// net.Buffers.WriteTo would. It may change the elements of v.
	writeParts(v [][]byte) error
	// writeAwait writes v as writeParts does and then waits until the
	// connection has bytes to read (the answer's first), without a read
	// that would find nothing: the next Read returns them. sent is the
	// time (now) when the write ended. A deadline or a closed connection
	// ends the wait with the error the read would have returned. With
	// idle (a connection that sat in the pool) it first checks, as
	// checkIdle does, and writes nothing if the check fails.
	writeAwait(v [][]byte, now func() int64, idle bool) (sent int64, err error)
	// checkIdle returns a *staleError if the server closed the connection
	// or sent bytes nobody asked for (a 408 said on an idle connection)
	// while it sat in the pool; a sock that cannot tell without blocking
	// returns nil.
	checkIdle() error
}

// staleError is a pooled connection the server had closed, or said
// something on, before the request was written: nothing was sent, and the
// request goes again on a new connection (retryable).
type staleError struct{ what string }

func (e *staleError) Error() string {
	return "idle connection " + e.what + " before the request was sent"
}

// netSock is the portable sock: the connection's own Read and
// net.Buffers (one writev on a plain connection). It carries TLS
// connections, and plain ones where the raw socket is not used.
type netSock struct {
	c    net.Conn
	bufs net.Buffers // reused: a local one would escape into WriteTo
	// under is the connection under a TLS one when it can read without
	// waiting (Linux: peekConn), which checkIdle needs; nil: no check.
	under *peekConn
	pb    [64]byte // the check's read buffer
}

// newNetSock returns the netSock of c.
func newNetSock(c net.Conn) *netSock {
	s := &netSock{c: c}
	if tc, ok := c.(*tls.Conn); ok {
		s.under, _ = tc.NetConn().(*peekConn)
	}
	return s
}

func (s *netSock) Read(p []byte) (int, error) { return s.c.Read(p) }

// errNothingWaits is peekConn's read that found the socket empty: a
// temporary timeout, which the TLS layer returns without keeping it as
// the connection's error.
var errNothingWaits = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}

// checkIdle on a TLS connection (rawSock.checkIdle's twin): one TLS read
// over a connection whose reads, for this once, take what the kernel
// holds without waiting (peekConn.look). The TLS layer takes a session
// ticket or key update by itself, and finds nothing more; a close_notify,
// a close, a reset or an answer nobody asked for (a 408) make the
// connection stale. A record that had only partly arrived stays with the
// TLS layer for the next read.
func (s *netSock) checkIdle() error {
	if s.under == nil {
		return nil
	}
	s.under.look = true
	m, err := s.c.Read(s.pb[:])
	s.under.look = false
	switch {
	case m > 0:
		return &staleError{fmt.Sprintf("had bytes from the server (%q)", s.pb[:m])}
	case err == nil || errors.Is(err, errNothingWaits):
		return nil
	case isEOF(err):
		return &staleError{"was closed by the server"}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return err // the connection's own deadline: an abort
	}
	return &staleError{"failed (" + err.Error() + ")"}
}

// writeAwait is writeParts after checkIdle on a pooled connection: the
// first Read waits.
func (s *netSock) writeAwait(v [][]byte, now func() int64, idle bool) (int64, error) {
	if idle {
		if err := s.checkIdle(); err != nil {
			return 0, err
		}
	}
	err := s.writeParts(v)
	return now(), err
}

func (s *netSock) writeParts(v [][]byte) error {
	s.bufs = append(s.bufs[:0], v...)
	_, err := s.bufs.WriteTo(s.c)
	clear(s.bufs[:cap(s.bufs)])
	return err
}
