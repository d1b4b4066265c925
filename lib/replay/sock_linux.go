package replay

import (
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawSock reads and writes a plain TCP connection with raw system calls
// (syscall.RawSyscall) inside the connection's own poller (RawConn), so
// that deadlines, readiness waits and closing behave exactly as with
// net.Conn's Read and net.Buffers, and the errors are the same values.
//
// Why: net.Conn's Read and Write enter the Go scheduler's system-call
// state around each call (entersyscall). A replay makes about four such
// calls a request and is idle between them (it waits for the server), so
// nearly every first call after an idle moment woke the runtime's monitor
// thread (sysmon), which then polled every 20 µs for a millisecond or more:
// about a tenth of the client's CPU on a loaded 2-core machine, in context
// switches. A non-blocking socket read or write never blocks (a full or
// empty socket returns EAGAIN and the poller waits), so the scheduler has
// nothing to hand off while one runs.
type rawSock struct {
	tc      rawConn // a TCP or unix connection
	rc      syscall.RawConn
	readFn  func(fd uintptr) bool // s.read, bound once (a method value allocates)
	writeFn func(fd uintptr) bool

	p     []byte   // the read's buffer
	v     [][]byte // what the write has left
	iov   []syscall.Iovec
	n     int   // bytes read
	wrote int64 // bytes written
	errno syscall.Errno
	empty bool // a writev wrote nothing and said nothing

	awaitFn func(fd uintptr) bool // s.await, bound once
	now     func() int64
	sent    int64 // writeAwait: when the write ended
	written bool  // writeAwait: the write ended

	idle    bool                  // writeAwait: check the pooled connection first
	stale   error                 // the check's finding
	checkFn func(fd uintptr) bool // s.check, bound once
	pb      [64]byte              // the check's read buffer
}

// rawConn is a connection rawSock can drive: *net.TCPConn or
// *net.UnixConn (a unix:// target).
type rawConn interface {
	net.Conn
	SyscallConn() (syscall.RawConn, error)
}

// newSock returns the sock of a new connection.
func newSock(c net.Conn) sock {
	var tc rawConn
	switch c := c.(type) {
	case *net.TCPConn:
		tc = c
	case *net.UnixConn:
		tc = c
	default:
		return newNetSock(c)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return newNetSock(c)
	}
	s := &rawSock{tc: tc, rc: rc}
	s.readFn, s.writeFn, s.awaitFn, s.checkFn = s.read, s.writev, s.await, s.check
	return s
}

// checkIdle makes the read that must find nothing on a connection that sat
// in the pool. It is needed because the poller forgets readiness when a
// read starts (RawConn.Read): a close (FIN) or a reset that came while the
// connection was idle, or with the last bytes of its previous answer, is
// then never signalled again, and writeAwait's wait would hold the request
// until --timeout (forever by default) when the server half-closed and
// keeps the socket open; bytes the server said unasked (a 408 on the idle
// connection) would be read as the answer.
func (s *rawSock) checkIdle() error {
	s.stale = nil
	if err := s.rc.Read(s.checkFn); err != nil {
		return s.opError("read", err)
	}
	return s.stale
}

func (s *rawSock) check(fd uintptr) bool {
	s.probe(fd)
	return true
}

// probe sets s.stale unless a read finds the socket empty (EAGAIN).
func (s *rawSock) probe(fd uintptr) {
	for {
		n, e := sysRead(fd, s.pb[:])
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			s.stale = nil
		case e != 0:
			s.stale = &staleError{"failed (" + e.Error() + ")"}
		case n == 0:
			s.stale = &staleError{"was closed by the server"}
		default:
			s.stale = &staleError{fmt.Sprintf("had bytes from the server (%q)", s.pb[:n])}
		}
		return
	}
}

func (s *rawSock) read(fd uintptr) bool {
	for {
		n, e := sysRead(fd, s.p)
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // the poller waits for readability and calls again
		}
		s.n, s.errno = n, e
		return true
	}
}

// Read is net.Conn's Read: the same bytes, io.EOF at the end, the same
// *net.OpError otherwise.
func (s *rawSock) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.p, s.n, s.errno = p, 0, 0
	err := s.rc.Read(s.readFn)
	s.p = nil
	switch {
	case err != nil: // the poller's: a deadline, a closed connection
		return 0, s.opError("read", err)
	case s.errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: s.tc.LocalAddr(), Addr: s.tc.RemoteAddr(), Err: os.NewSyscallError("read", s.errno)}
	case s.n == 0:
		return 0, io.EOF
	}
	return s.n, nil
}

// maxIOV is the most iovecs one writev takes (Linux's UIO_MAXIOV, the
// standard library's bound).
const maxIOV = 1024

func (s *rawSock) writev(fd uintptr) bool {
	for len(s.v) > 0 {
		s.iov = s.iov[:0]
		for _, b := range s.v {
			if len(b) == 0 {
				continue
			}
			iv := syscall.Iovec{Base: &b[0]}
			iv.SetLen(len(b))
			s.iov = append(s.iov, iv)
			if len(s.iov) == maxIOV {
				break
			}
		}
		if len(s.iov) == 0 {
			break
		}
		w, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(unsafe.SliceData(s.iov))), uintptr(len(s.iov)))
		clear(s.iov)
		if e == syscall.EINTR {
			continue
		}
		if e == syscall.EAGAIN {
			return false // the poller waits for room and calls again
		}
		if e != 0 {
			s.errno = e
			return true
		}
		s.wrote += int64(w)
		if s.wrote == 0 {
			s.empty = true // reported as net.Buffers reports it
			return true
		}
		consumeParts(&s.v, int64(w))
	}
	return true
}

// writeParts is net.Buffers.WriteTo on the connection; it may change
// the elements of v.
func (s *rawSock) writeParts(v [][]byte) error {
	s.v, s.wrote, s.errno, s.empty = v, 0, 0, false
	err := s.rc.Write(s.writeFn)
	s.v = nil
	switch {
	case err != nil:
		return s.opError("writev", err)
	case s.errno != 0:
		return &net.OpError{Op: "writev", Net: "tcp", Source: s.tc.LocalAddr(), Addr: s.tc.RemoteAddr(), Err: os.NewSyscallError("writev", s.errno)}
	case s.empty:
		return &net.OpError{Op: "writev", Net: "tcp", Source: s.tc.LocalAddr(), Addr: s.tc.RemoteAddr(), Err: io.ErrUnexpectedEOF}
	}
	return nil
}

// writeAwait writes v and waits for the answer inside one poller read,
// so that the read which would find nothing after the write is not made.
//
// Why it is safe: the poller forgets a connection's readiness when a read
// starts (RawConn.Read), which is why a read must come before every wait;
// here the write happens after that point, so the answer to it can only
// arrive after it too, and its arrival wakes the wait. The first read then
// finds the answer's bytes, at the time they can be read, as before. A
// close that came before that point (while a pooled connection was idle)
// is not signalled again: with idle, the read that must find nothing is
// made first, inside the same poller read (checkIdle), so a pooled
// connection saves nothing and a fresh one saves its read.
// Whatever the write could not place at once (a body larger than the
// socket's buffer) is written by writeParts, and the next Read then waits
// as it always does.
func (s *rawSock) writeAwait(v [][]byte, now func() int64, idle bool) (int64, error) {
	s.v, s.wrote, s.errno, s.empty, s.now, s.written = v, 0, 0, false, now, false
	s.idle, s.stale = idle, nil
	err := s.rc.Read(s.awaitFn)
	rest := s.v
	s.v, s.now = nil, nil
	switch {
	case s.stale != nil:
		return 0, s.stale
	case s.errno != 0:
		return 0, &net.OpError{Op: "writev", Net: "tcp", Source: s.tc.LocalAddr(), Addr: s.tc.RemoteAddr(), Err: os.NewSyscallError("writev", s.errno)}
	case s.empty:
		return 0, &net.OpError{Op: "writev", Net: "tcp", Source: s.tc.LocalAddr(), Addr: s.tc.RemoteAddr(), Err: io.ErrUnexpectedEOF}
	case !s.written && err != nil: // the poller's, before the write
		return 0, s.opError("writev", err)
	case !s.written: // the socket's buffer is full: write the rest with waits
		if err := s.writeParts(rest); err != nil {
			return 0, err
		}
		return now(), nil
	case err != nil: // the wait for the answer: a deadline, a closed connection
		return s.sent, s.opError("read", err)
	}
	return s.sent, nil
}

// await is writeAwait's step: the write, then (called again once the
// connection is readable) nothing.
func (s *rawSock) await(fd uintptr) bool {
	if s.written {
		return true // readable: the caller's Read takes the bytes
	}
	if s.idle {
		// inside this poller read, so that a close from now on wakes the
		// wait below, and one from before is found here
		s.idle = false
		if s.probe(fd); s.stale != nil {
			return true
		}
	}
	if !s.writev(fd) {
		return true // room ran out: writeAwait finishes with writeParts
	}
	if s.errno != 0 || s.empty {
		return true
	}
	s.sent, s.written = s.now(), true
	return false // wait until the answer can be read
}

// opError gives an error of the poller (RawConn's "raw-read" or
// "raw-write") the operation name net.Conn's own call reports.
func (s *rawSock) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		e := *oe
		e.Op = op
		return &e
	}
	return err
}

// consumeParts drops the first n bytes of *v.
func consumeParts(v *[][]byte, n int64) {
	for len(*v) > 0 {
		l := int64(len((*v)[0]))
		if l > n {
			(*v)[0] = (*v)[0][n:]
			return
		}
		n -= l
		*v = (*v)[1:]
	}
}

// peekConn is the TCP connection under a TLS one (underTLS). Its reads
// are the connection's own, but with look set (netSock.checkIdle) a read
// takes what the kernel holds without waiting, and finds an empty socket
// with errNothingWaits.
type peekConn struct {
	*net.TCPConn
	rc   syscall.RawConn
	look bool
}

// underTLS returns the connection a TLS client runs over: c, made a
// peekConn when it is TCP.
func underTLS(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &peekConn{TCPConn: tc, rc: rc}
}

func (c *peekConn) Read(p []byte) (int, error) {
	if !c.look || len(p) == 0 {
		return c.TCPConn.Read(p)
	}
	var n int
	var errno syscall.Errno
	if err := c.rc.Read(func(fd uintptr) bool {
		for {
			n, errno = sysRead(fd, p)
			if errno != syscall.EINTR {
				return true
			}
		}
	}); err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	switch {
	case errno == syscall.EAGAIN:
		return 0, errNothingWaits
	case errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", errno)}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
