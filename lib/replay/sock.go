package replay

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
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
	// raw is the TCP socket under a TLS connection, which checkIdle peeks
	// at (nil: no check); restore puts the request's read deadline back
	// after the check's TLS read (set by the pool, which knows it).
	raw     syscall.RawConn
	restore func()
	pb      [64]byte // the check's read buffer
}

// newNetSock returns the netSock of c, with the TCP socket under it when
// c is TLS over TCP.
func newNetSock(c net.Conn) *netSock {
	s := &netSock{c: c}
	if tc, ok := c.(*tls.Conn); ok {
		if tcp, ok := tc.NetConn().(*net.TCPConn); ok {
			if rc, err := tcp.SyscallConn(); err == nil {
				s.raw = rc
			}
		}
	}
	return s
}

func (s *netSock) Read(p []byte) (int, error) { return s.c.Read(p) }

// idleRecordWait bounds checkIdle's TLS read when the kernel holds bytes
// the server sent on the idle connection: the rest of their record is
// arriving.
const idleRecordWait = 100 * time.Millisecond

// checkIdle on a TLS connection (rawSock.checkIdle's twin): the kernel's
// receive queue is peeked without waiting (peekSocket). A close found
// there makes the connection stale. Bytes found there are TLS records,
// which only the TLS layer can read: one read, with a short deadline,
// tells a close_notify or an answer nobody asked for (a 408) from a
// session ticket or key update, which the TLS layer takes by itself.
// With the queue empty, the same read under a past deadline looks only at
// records the TLS layer already took from the socket with the last answer
// (the read returns at once without touching the socket), so a check
// that finds nothing costs no wait.
func (s *netSock) checkIdle() error {
	if s.raw == nil {
		return nil
	}
	n, eof, err := peekSocket(s.raw, s.pb[:])
	switch {
	case err != nil:
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return &staleError{"failed (" + errno.Error() + ")"}
		}
		return &net.OpError{Op: "read", Net: "tcp", Addr: s.c.RemoteAddr(), Err: err} // a deadline: an abort
	case eof:
		return &staleError{"was closed by the server"}
	}
	dl := time.Unix(1, 0)
	if n > 0 {
		dl = time.Now().Add(idleRecordWait)
	}
	s.c.SetReadDeadline(dl)
	m, err := s.c.Read(s.pb[:])
	if s.restore != nil {
		s.restore()
	}
	switch {
	case m > 0:
		return &staleError{fmt.Sprintf("had bytes from the server (%q)", s.pb[:m])}
	case err == nil || errors.Is(err, os.ErrDeadlineExceeded):
		return nil
	case isEOF(err):
		return &staleError{"was closed by the server"}
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
