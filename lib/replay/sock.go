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
}

// netSock is the portable sock: the connection's own Read and
// net.Buffers (one writev on a plain connection).
type netSock struct {
	c    net.Conn
	bufs net.Buffers // reused: a local one would escape into WriteTo
}

func (s *netSock) Read(p []byte) (int, error) { return s.c.Read(p) }

func (s *netSock) writeParts(v [][]byte) error {
	s.bufs = append(s.bufs[:0], v...)
	_, err := s.bufs.WriteTo(s.c)
	clear(s.bufs[:cap(s.bufs)])
	return err
}
