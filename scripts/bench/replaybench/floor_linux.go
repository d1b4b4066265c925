package main

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// floor is the least a client can do for replay.sh's part 1: C keep-alive
// connections on one locked OS thread, a level-triggered epoll loop, one
// write(2) a request (head and body in one buffer), one read(2) each time a
// connection is readable (a timestamp per read, as a streaming client
// takes), and no parsing beyond finding the end of the server's chunked
// body. Whatever a real client costs above this floor's CPU per request is
// its own; the floor itself is the kernel's price for the same segments on
// this machine (system calls, loopback TCP, wake-ups). It prints the same
// line as stats (ok, first_ns, last_ns) for replay.sh's measure.
//
// It speaks only to replaybench serve: every answer is the same chunked
// stream, so a response ends where the bytes read end with the last chunk.
func floor(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("floor STORE URL CONCURRENCY REQUESTS")
	}
	reqs, fds, total, closeAll, err := floorSetup(args)
	if err != nil {
		return err
	}
	defer closeAll()
	conc := len(fds)
	runtime.LockOSThread()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(ep)
	type fconn struct {
		fd   int
		tail []byte // the last bytes read, enough to see the end
		sent int64
	}
	conns := make([]*fconn, conc)
	byFD := map[int]*fconn{}
	for i, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			return err
		}
		c := &fconn{fd: fd}
		conns[i], byFD[fd] = c, c
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			return err
		}
	}
	end := []byte("\r\n0\r\n\r\n")
	next, ok, reads := 0, 0, 0
	var first, last int64
	send := func(c *fconn) error {
		b := reqs[next%len(reqs)]
		next++
		c.sent = time.Now().UnixNano()
		if first == 0 {
			first = c.sent
		}
		c.tail = c.tail[:0]
		n, err := unix.Write(c.fd, b)
		if err != nil || n != len(b) {
			return fmt.Errorf("write: %d of %d bytes: %v", n, len(b), err)
		}
		return nil
	}
	for _, c := range conns {
		if next < total {
			if err := send(c); err != nil {
				return err
			}
		}
	}
	buf := make([]byte, 64<<10)
	events := make([]unix.EpollEvent, conc)
	for ok < total {
		n, err := unix.EpollWait(ep, events, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			c := byFD[int(ev.Fd)]
			m, err := unix.Read(c.fd, buf)
			if err == syscall.EAGAIN {
				continue
			}
			if err != nil || m == 0 {
				return fmt.Errorf("read: %v (%d bytes)", err, m)
			}
			t := time.Now().UnixNano()
			reads++
			c.tail = append(c.tail, buf[:m]...)
			if len(c.tail) > 64 {
				c.tail = append(c.tail[:0], c.tail[len(c.tail)-64:]...)
			}
			if !bytes.HasSuffix(c.tail, end) {
				continue
			}
			ok++
			last = max(last, t)
			if next < total {
				if err := send(c); err != nil {
					return err
				}
			}
		}
	}
	fmt.Printf("records %d errors 0 ok %d first_ns %d last_ns %d reads_per_request %.2f\n", ok, ok, first, last, float64(reads)/float64(max(ok, 1)))
	return nil
}

// floorSetup is what both floors (epoll and io_uring) start from: the
// store's bodies as whole HTTP/1.1 requests (head and body in one buffer),
// CONCURRENCY connections to URL as raw descriptors (blocking dups of
// dialled connections), and the request count. closeAll closes them.
func floorSetup(args []string) (reqs [][]byte, fds []int, total int, closeAll func(), err error) {
	closeAll = func() {}
	st, err := openStore(args[0])
	if err != nil {
		return nil, nil, 0, closeAll, err
	}
	defer st.Close()
	u, err := url.Parse(args[1])
	if err != nil {
		return nil, nil, 0, closeAll, err
	}
	conc, total := atoi(args[2]), atoi(args[3])
	reqs = make([][]byte, st.Len())
	for i := range reqs {
		body := st.Payload(i)
		reqs[i] = fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			st.Meta()["path"], u.Host, len(body), body)
	}
	var files []*os.File
	closeAll = func() {
		for _, f := range files {
			f.Close()
		}
	}
	for range conc {
		nc, err := net.Dial("tcp", u.Host)
		if err != nil {
			closeAll()
			return nil, nil, 0, func() {}, err
		}
		f, err := nc.(*net.TCPConn).File()
		nc.Close()
		if err != nil {
			closeAll()
			return nil, nil, 0, func() {}, err
		}
		files = append(files, f)
		fds = append(fds, int(f.Fd()))
	}
	return reqs, fds, total, closeAll, nil
}
