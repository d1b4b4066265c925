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
	// ends the wait with the error the read would have returned.
	writeAwait(v [][]byte, now func() int64) (sent int64, err error)
}

// netSock is the portable sock: the connection's own Read and
// net.Buffers (one writev on a plain connection).
type netSock struct {
	c    net.Conn
	bufs net.Buffers // reused: a local one would escape into WriteTo
}

func (s *netSock) Read(p []byte) (int, error) { return s.c.Read(p) }

// writeAwait is writeParts: the first Read waits.
func (s *netSock) writeAwait(v [][]byte, now func() int64) (int64, error) {
	err := s.writeParts(v)
	return now(), err
}

func (s *netSock) writeParts(v [][]byte) error {
	s.bufs = append(s.bufs[:0], v...)
	_, err := s.bufs.WriteTo(s.c)
	clear(s.bufs[:cap(s.bufs)])
	return err
}
