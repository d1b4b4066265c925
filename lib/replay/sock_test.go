package replay

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client *net.TCPConn, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s
}

// anon replaces a connection's addresses in an error message.
func anon(msg string, c net.Conn) string {
	return strings.NewReplacer(c.LocalAddr().String(), "LOCAL", c.RemoteAddr().String(), "REMOTE").Replace(msg)
}

// A connection's sock moves the same bytes as net.Conn and net.Buffers:
// a write far larger than the socket buffers (partial writes, waits for
// room) arrives whole and in order, and reads return what was sent, then
// io.EOF.
func TestSockBytes(t *testing.T) {
	c, s := tcpPair(t)
	sk := newSock(c)
	var parts [][]byte
	var want []byte
	for i := range 40 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, 100_000+i)
		parts = append(parts, p, nil) // empty parts are skipped
		want = append(want, p...)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(s)
		got <- b
	}()
	if err := sk.writeParts(parts); err != nil {
		t.Fatal(err)
	}
	c.CloseWrite()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("server got %d bytes, want %d (equal: %v)", len(b), len(want), bytes.Equal(b, want))
	}

	go func() {
		s.Write([]byte("hello"))
		s.Close()
	}()
	var b []byte
	buf := make([]byte, 3)
	for {
		n, err := sk.Read(buf)
		b = append(b, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(b) != "hello" {
		t.Fatalf("read %q, want hello", b)
	}
	if n, err := sk.Read(nil); n != 0 || err != nil {
		t.Errorf("empty read: %d, %v", n, err)
	}
}

// Its errors are net.Conn's: a deadline, a reset connection, a write to
// a closed one.
func TestSockErrors(t *testing.T) {
	c, _ := tcpPair(t)
	c.SetReadDeadline(time.Now().Add(-time.Second))
	_, want := c.Read(make([]byte, 10))
	_, err := newSock(c).Read(make([]byte, 10))
	if !errors.Is(err, os.ErrDeadlineExceeded) || err.Error() != want.Error() {
		t.Errorf("deadline: got %v, want %v", err, want)
	}
	c.SetDeadline(time.Time{})

	// A reset: the server closes with SO_LINGER 0, which sends an RST (on
	// loopback it has arrived when Close returns).
	reset := func() *net.TCPConn {
		c, s := tcpPair(t)
		s.(*net.TCPConn).SetLinger(0)
		s.Close()
		return c
	}
	c1 := reset()
	_, want = c1.Read(make([]byte, 10))
	c2 := reset()
	_, err = newSock(c2).Read(make([]byte, 10))
	if err == nil || want == nil || anon(err.Error(), c2) != anon(want.Error(), c1) {
		t.Errorf("reset read: got %v, want %v", err, want)
	}

	c1 = reset()
	bufs := net.Buffers{[]byte("a"), []byte("b")}
	_, want = bufs.WriteTo(c1)
	c2 = reset()
	err = newSock(c2).writeParts([][]byte{[]byte("a"), []byte("b")})
	if err == nil || want == nil || anon(err.Error(), c2) != anon(want.Error(), c1) {
		t.Errorf("reset write: got %v, want %v", err, want)
	}

	c3, _ := tcpPair(t)
	sk := newSock(c3)
	c3.Close()
	bufs = net.Buffers{[]byte("a")}
	_, want = bufs.WriteTo(c3)
	err = sk.writeParts([][]byte{[]byte("a")})
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("closed write: got %v, want %v", err, want)
	}
	_, want = c3.Read(make([]byte, 1))
	_, err = sk.Read(make([]byte, 1))
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("closed read: got %v, want %v", err, want)
	}
}

// writeAwait sends what writeParts sends (a small request in one write, a
// large one with waits for room) and returns once the answer can be read;
// the next Read has it.
func TestSockWriteAwait(t *testing.T) {
	for _, size := range []int{100, 4_000_000} {
		c, s := tcpPair(t)
		sk := newSock(c)
		req := bytes.Repeat([]byte("r"), size)
		got := make(chan []byte)
		go func() {
			b := make([]byte, size)
			io.ReadFull(s, b)
			s.Write([]byte("answer"))
			got <- b
		}()
		var clock int64 = 41
		sent, err := sk.writeAwait([][]byte{req[:size/2], nil, req[size/2:]}, func() int64 { clock++; return clock }, false)
		if err != nil || sent == 0 {
			t.Fatalf("size %d: sent %d, %v", size, sent, err)
		}
		if b := <-got; !bytes.Equal(b, req) {
			t.Fatalf("size %d: server got %d bytes", size, len(b))
		}
		buf := make([]byte, 64)
		if n, err := sk.Read(buf); string(buf[:n]) != "answer" || err != nil {
			t.Fatalf("size %d: read %q, %v", size, buf[:n], err)
		}
	}
}

// A deadline ends writeAwait's wait as it ends a read; a connection the
// server has closed or reset fails the write or the read after it with an
// error a retry on a new connection takes (retryable), and never hangs.
func TestSockWriteAwaitErrors(t *testing.T) {
	now := func() int64 { return 1 }
	c, _ := tcpPair(t)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	sent, err := newSock(c).writeAwait([][]byte{[]byte("x")}, now, false)
	if sent == 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("deadline: sent %d, %v", sent, err)
	}

	for _, linger := range []bool{false, true} {
		c, s := tcpPair(t)
		if linger {
			s.(*net.TCPConn).SetLinger(0) // close sends an RST
		}
		s.Close()
		time.Sleep(10 * time.Millisecond) // the FIN or RST has arrived, as on an idle keep-alive connection
		c.SetDeadline(time.Now().Add(5 * time.Second))
		sk := newSock(c)
		_, err := sk.writeAwait([][]byte{[]byte("POST / HTTP/1.1\r\n\r\n")}, now, false)
		if err == nil {
			_, err = sk.Read(make([]byte, 10))
		}
		if !retryable(err) {
			t.Errorf("linger %v: %v, want an error a retry takes", linger, err)
		}
	}
}

// A pooled connection is checked before its request is written: a close
// the server made while it sat idle (a FIN with the socket kept open, a
// reset) or bytes it said unasked (a 408) fail at once with a staleError,
// which a retry takes, and nothing is written; a quiet one passes and the
// answer is awaited as on a fresh connection. Without the check a FIN that
// came before the wait is never signalled again (the poller forgets
// readiness when a read starts) and the wait lasts until the deadline.
func TestSockCheckIdle(t *testing.T) {
	now := func() int64 { return 1 }
	for _, tc := range []struct {
		name  string
		close func(s *net.TCPConn)
		stale string // "" when the connection is fine
	}{
		{"quiet", func(*net.TCPConn) {}, ""},
		{"half-closed, still reading", func(s *net.TCPConn) { s.CloseWrite() }, "was closed by the server"},
		{"reset", func(s *net.TCPConn) { s.SetLinger(0); s.Close() }, "failed (connection reset by peer)"},
		{"408 said on it", func(s *net.TCPConn) {
			s.Write([]byte("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n"))
		}, `had bytes from the server ("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n")`},
	} {
		for _, how := range []string{"writeAwait", "checkIdle"} {
			c, s := tcpPair(t)
			tc.close(s.(*net.TCPConn))
			time.Sleep(20 * time.Millisecond) // it has arrived, as on an idle connection
			c.SetDeadline(time.Now().Add(2 * time.Second))
			sk := newSock(c)
			var err error
			if how == "writeAwait" {
				if tc.stale == "" {
					go func() { // a server that answers what it gets
						if n, _ := s.Read(make([]byte, 100)); n > 0 {
							s.Write([]byte("answer"))
						}
					}()
				}
				start := time.Now()
				_, err = sk.writeAwait([][]byte{[]byte("POST / HTTP/1.1\r\n\r\n")}, now, true)
				if d := time.Since(start); d > time.Second {
					t.Errorf("%s, %s: took %v", tc.name, how, d)
				}
			} else {
				err = sk.checkIdle()
			}
			var se *staleError
			switch {
			case tc.stale == "" && err != nil:
				t.Errorf("%s, %s: %v", tc.name, how, err)
			case tc.stale != "" && (!errors.As(err, &se) || se.what != tc.stale || !retryable(err)):
				t.Errorf("%s, %s: got %v, want a retryable staleError %q", tc.name, how, err, tc.stale)
			}
			if tc.stale != "" && how == "writeAwait" {
				s.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				if n, _ := s.Read(make([]byte, 100)); n > 0 {
					t.Errorf("%s: %d bytes written on a stale connection", tc.name, n)
				}
			}
		}
	}
}
