package main

import (
	"bytes"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// uringFloor is floor's io_uring twin: the same connections, requests and
// end-of-stream test, but each connection's stream is taken by one
// multishot receive into a provided-buffer ring and each request is an
// IORING_OP_SEND, all reaped by one io_uring_enter a batch on one locked
// thread (SINGLE_ISSUER|DEFER_TASKRUN, as liburing's docs recommend for a
// single-threaded server). A completion carries the bytes already copied,
// so there is no read(2) and no readiness wake-up per segment: what is left
// is the kernel's TCP work and one enter a batch. It answers whether a
// client built on io_uring could spend less CPU a request than the epoll
// floor on this machine's kernel. Linux 6.0 or later (multishot receive,
// buffer rings).
func uringFloor(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("uring STORE URL CONCURRENCY REQUESTS")
	}
	reqs, fds, total, closeAll, err := floorSetup(args)
	if err != nil {
		return err
	}
	defer closeAll()
	runtime.LockOSThread()
	r, err := newRing(1024)
	if err != nil {
		return err
	}
	defer r.close()
	const nbuf, bufSize = 1024, 4096
	br, err := r.bufRing(0, nbuf, bufSize)
	if err != nil {
		return err
	}
	type uconn struct {
		fd   int
		tail []byte
		req  []byte
	}
	conns := make([]*uconn, len(fds))
	for i, fd := range fds {
		conns[i] = &uconn{fd: fd}
	}
	const opRecv, opSend = 1, 2
	recv := func(i int) {
		s := r.sqe()
		s.opcode = 27     // IORING_OP_RECV
		s.flags = 1 << 5  // IOSQE_BUFFER_SELECT
		s.ioprio = 1 << 1 // IORING_RECV_MULTISHOT
		s.fd = int32(conns[i].fd)
		s.bufGroup = 0
		s.userData = opRecv<<56 | uint64(i)
	}
	next, ok, cqes := 0, 0, 0
	var first, last int64
	send := func(i int) {
		c := conns[i]
		c.req = reqs[next%len(reqs)]
		next++
		if first == 0 {
			first = time.Now().UnixNano()
		}
		c.tail = c.tail[:0]
		s := r.sqe()
		s.opcode = 26 // IORING_OP_SEND
		s.fd = int32(c.fd)
		s.addr = uint64(uintptr(unsafe.Pointer(&c.req[0])))
		s.len = uint32(len(c.req))
		s.userData = opSend<<56 | uint64(len(c.req))<<32 | uint64(i)
	}
	for i := range conns {
		recv(i)
		if next < total {
			send(i)
		}
	}
	end := []byte("\r\n0\r\n\r\n")
	for ok < total {
		if err := r.enter(1); err != nil {
			return err
		}
		for {
			cq, more := r.cqe()
			if !more {
				break
			}
			// user data: the operation (bits 56-63), a send's length (32-55), the connection (0-31)
			i, op, sent, res, flags := int(uint32(cq.userData)), cq.userData>>56, int32(cq.userData>>32&(1<<24-1)), cq.res, cq.flags
			r.seen()
			c := conns[i]
			switch op {
			case opSend:
				if res != sent {
					return fmt.Errorf("send: %d of %d bytes", res, sent)
				}
			case opRecv:
				if flags&1 == 0 { // no buffer: the multishot ended
					if res == -int32(syscall.ENOBUFS) {
						recv(i)
						continue
					}
					return fmt.Errorf("recv: %v", syscall.Errno(-res))
				}
				t := time.Now().UnixNano()
				cqes++
				bid := uint16(flags >> 16)
				c.tail = append(c.tail, br.buf(bid)[:res]...)
				br.recycle(bid)
				if flags&2 == 0 { // IORING_CQE_F_MORE clear: re-arm
					recv(i)
				}
				if len(c.tail) > 64 {
					c.tail = append(c.tail[:0], c.tail[len(c.tail)-64:]...)
				}
				if !bytes.HasSuffix(c.tail, end) {
					continue
				}
				ok++
				last = max(last, t)
				if next < total {
					send(i)
				}
			}
		}
		br.publish()
	}
	fmt.Printf("records %d errors 0 ok %d first_ns %d last_ns %d reads_per_request %.2f\n", ok, ok, first, last, float64(cqes)/float64(max(ok, 1)))
	return nil
}

// The kernel's structures (include/uapi/linux/io_uring.h).
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

type uringSQE struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufGroup    uint16
	personality uint16
	spliceFD    int32
	addr3       uint64
	pad         uint64
}

type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

type ring struct {
	fd                 int
	sqMem, cqMem, sqes []byte
	sqHead, sqTail     *uint32
	sqMask             uint32
	sqArray            []uint32
	cqHead, cqTail     *uint32
	cqMask             uint32
	cqes               []uringCQE
	sqeArr             []uringSQE
	pending            uint32 // SQEs written since the last enter
	localTail          uint32
	localHead          uint32
}

func newRing(entries uint32) (*ring, error) {
	var p uringParams
	p.flags = 1<<12 | 1<<13 // IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
	p.flags |= 1 << 4       // IORING_SETUP_CQSIZE
	p.cqEntries = entries * 4
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup: %v", e)
	}
	r := &ring{fd: int(fd)}
	var err error
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(uringCQE{})))
	if r.sqMem, err = unix.Mmap(r.fd, 0, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return nil, err
	}
	if r.cqMem, err = unix.Mmap(r.fd, 0x8000000, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return nil, err
	}
	if r.sqes, err = unix.Mmap(r.fd, 0x10000000, int(p.sqEntries)*64, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return nil, err
	}
	r.sqHead = (*uint32)(unsafe.Pointer(&r.sqMem[p.sqOff.head]))
	r.sqTail = (*uint32)(unsafe.Pointer(&r.sqMem[p.sqOff.tail]))
	r.sqMask = *(*uint32)(unsafe.Pointer(&r.sqMem[p.sqOff.ringMask]))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Pointer(&r.sqMem[p.sqOff.array])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Pointer(&r.cqMem[p.cqOff.head]))
	r.cqTail = (*uint32)(unsafe.Pointer(&r.cqMem[p.cqOff.tail]))
	r.cqMask = *(*uint32)(unsafe.Pointer(&r.cqMem[p.cqOff.ringMask]))
	r.cqes = unsafe.Slice((*uringCQE)(unsafe.Pointer(&r.cqMem[p.cqOff.cqes])), p.cqEntries)
	r.sqeArr = unsafe.Slice((*uringSQE)(unsafe.Pointer(&r.sqes[0])), p.sqEntries)
	r.localTail = atomic.LoadUint32(r.sqTail)
	r.localHead = atomic.LoadUint32(r.cqHead)
	return r, nil
}

func (r *ring) close() {
	unix.Munmap(r.sqes)
	unix.Munmap(r.cqMem)
	unix.Munmap(r.sqMem)
	unix.Close(r.fd)
}

// sqe returns the next free submission entry, zeroed.
func (r *ring) sqe() *uringSQE {
	if r.localTail-atomic.LoadUint32(r.sqHead) > r.sqMask {
		panic("submission ring full")
	}
	i := r.localTail & r.sqMask
	r.sqArray[i] = i
	s := &r.sqeArr[i]
	*s = uringSQE{}
	r.localTail++
	r.pending++
	return s
}

// enter publishes the written entries and waits for at least min completions.
func (r *ring) enter(min uint32) error {
	atomic.StoreUint32(r.sqTail, r.localTail)
	for {
		_, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), uintptr(min), 1 /* GETEVENTS */, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return fmt.Errorf("io_uring_enter: %v", e)
		}
		r.pending = 0
		return nil
	}
}

func (r *ring) cqe() (*uringCQE, bool) {
	if r.localHead == atomic.LoadUint32(r.cqTail) {
		atomic.StoreUint32(r.cqHead, r.localHead)
		return nil, false
	}
	return &r.cqes[r.localHead&r.cqMask], true
}

func (r *ring) seen() { r.localHead++ }

// bufRing is a provided-buffer ring (IORING_REGISTER_PBUF_RING): the kernel
// takes a buffer from it for each multishot completion, and recycle gives
// the buffer back once its bytes are used.
type bufRing struct {
	mem   []byte // the ring of 16-byte entries, page-aligned
	data  []byte
	size  int
	mask  uint16
	tail  uint16
	tailp *uint16
}

func (r *ring) bufRing(group uint16, n uint16, size int) (*bufRing, error) {
	mem, err := unix.Mmap(-1, 0, int(n)*16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	reg := struct {
		ringAddr    uint64
		ringEntries uint32
		bgid        uint16
		flags       uint16
		resv        [3]uint64
	}{ringAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), ringEntries: uint32(n), bgid: group}
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), 22 /* IORING_REGISTER_PBUF_RING */, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); e != 0 {
		return nil, fmt.Errorf("register buffer ring: %v", e)
	}
	b := &bufRing{mem: mem, data: make([]byte, int(n)*size), size: size, mask: n - 1, tailp: (*uint16)(unsafe.Pointer(&mem[14]))}
	for i := uint16(0); i < n; i++ {
		b.recycle(i)
	}
	b.publish()
	return b, nil
}

func (b *bufRing) buf(bid uint16) []byte { return b.data[int(bid)*b.size : int(bid+1)*b.size] }

func (b *bufRing) recycle(bid uint16) {
	e := b.mem[int(b.tail&b.mask)*16:]
	*(*uint64)(unsafe.Pointer(&e[0])) = uint64(uintptr(unsafe.Pointer(&b.data[int(bid)*b.size])))
	*(*uint32)(unsafe.Pointer(&e[8])) = uint32(b.size)
	*(*uint16)(unsafe.Pointer(&e[12])) = bid
	b.tail++
}

// publish makes the recycled entries visible to the kernel (a release store
// of the tail after the entries' writes; the atomic add is the compiler
// barrier, x86's stores are ordered).
func (b *bufRing) publish() {
	var fence uint32
	atomic.AddUint32(&fence, 1)
	*b.tailp = b.tail
}
