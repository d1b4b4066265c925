package replay

import "net"

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
// net.Buffers (one writev on a plain connection).
type netSock struct {
	c    net.Conn
	bufs net.Buffers // reused: a local one would escape into WriteTo
}

func (s *netSock) Read(p []byte) (int, error) { return s.c.Read(p) }

// checkIdle cannot read without blocking through net.Conn (a TLS
// connection): the first Read after the write still sees a close.
func (s *netSock) checkIdle() error { return nil }

// writeAwait is writeParts: the first Read waits.
func (s *netSock) writeAwait(v [][]byte, now func() int64, idle bool) (int64, error) {
	err := s.writeParts(v)
	return now(), err
}

func (s *netSock) writeParts(v [][]byte) error {
	s.bufs = append(s.bufs[:0], v...)
	_, err := s.bufs.WriteTo(s.c)
	clear(s.bufs[:cap(s.bufs)])
	return err
}
