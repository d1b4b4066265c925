package store

import (
	"bytes"
	"hash"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpenDoesNotTouchData maps a store, makes the pages that hold only
// payload bytes inaccessible, and opens the mapping: any read of a payload
// byte during Open would fault.
func TestOpenDoesNotTouchData(t *testing.T) {
	for _, spec := range []*Spec{genSpec(14, 40, 3, 40000, true), genSpec(15, 60, 1, 40000, false)} {
		path := writeTemp(t, spec)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		page := uint64(os.Getpagesize())
		data := sec(m, secData)
		from, to := align8(headerSize+page-1)&^(page-1), data.end()&^(page-1)
		if to <= from+page {
			t.Fatalf("data section too small to protect: [%d, %d)", from, to)
		}
		if err := unix.Mprotect(m[from:to], unix.PROT_NONE); err != nil {
			t.Fatal(err)
		}
		func() {
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("OpenBytes read the data section: %v", r)
				}
			}()
			r, err := OpenBytes(m)
			if err != nil {
				t.Errorf("OpenBytes: %v", err)
				return
			}
			// Index access must not touch the data either.
			for i := range r.Len() {
				r.Entry(i)
				_ = len(r.Payload(i))
			}
			for s := range uint32(r.NumSessions()) {
				r.SessionID(s)
				r.Lookup(s, 0)
			}
		}()
		unix.Munmap(m)
	}
}

// sparseStore writes a store whose one record claims size bytes, all of them
// a hole in a sparse file: a few KB on disk whatever size is (the hostile
// store of issue 6). Open accepts it; only Verify would find the checksum
// wrong.
func sparseStore(t *testing.T, size uint64) string {
	t.Helper()
	small := image(t, &Spec{Sessions: []string{"s"}, Records: []Record{{Entry: Entry{Line: 1}, Payload: make([]byte, 8)}}})
	delta := align8(size) - 8
	h := small[:headerSize:headerSize]
	put64(h, hOffPayload, size)
	for i := range numSections {
		s := sec(h, i)
		if i == secData {
			put64(h, uint64(hOffSections+16*i+8), align8(size))
		} else if i != secHashes {
			put64(h, uint64(hOffSections+16*i), s.off+delta)
		}
	}
	rest := append([]byte(nil), small[headerSize+8:]...)
	put32(rest, colOffset(1, colLen), uint32(size))
	path := filepath.Join(t.TempDir(), "sparse.aipk")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(h); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(rest, int64(headerSize+align8(size))); err != nil {
		t.Fatal(err)
	}
	return path
}

// rssFile returns the process's resident file-backed memory in bytes.
func rssFile(t *testing.T) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// sumWriter reads every byte it is given (a discarding writer would not
// fault the mapping in).
type sumWriter struct{ h hash.Hash32 }

func (w sumWriter) Write(p []byte) (int, error) { return w.h.Write(p) }

// TestWritePayloadBoundedMemory writes a 256 MiB record of a sparse store:
// the resident set must grow by about one piece, not by the record.
func TestWritePayloadBoundedMemory(t *testing.T) {
	const size = 256 << 20
	r, err := Open(sparseStore(t, size), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before := rssFile(t)
	w := sumWriter{crc32.NewIEEE()}
	n, err := r.WritePayload(w, 0)
	if err != nil || n != size {
		t.Fatalf("WritePayload: %d bytes, %v", n, err)
	}
	if w.h.Sum32() != crc32.ChecksumIEEE(make([]byte, size)) {
		t.Fatal("WritePayload wrote other bytes than the record's")
	}
	if grew := rssFile(t) - before; grew > 4*payloadChunk {
		t.Errorf("resident file memory grew by %d MiB writing a %d MiB record", grew>>20, size>>20)
	}
}

// TestOpenFIFO: a FIFO given as a store is refused at once instead of
// waiting for a writer.
func TestOpenFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "p.aipk")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Open(fifo, OpenOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "a named pipe, not a regular file") {
			t.Fatalf("Open(FIFO): got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open(FIFO) blocks")
	}
	if _, err := Open("/dev/zero", OpenOptions{}); err == nil || !strings.Contains(err.Error(), "a character device") {
		t.Errorf("Open(/dev/zero): got %v", err)
	}
}

// TestWritePayloadNeighbours: dropping the pages of a large record leaves
// the records around it (sharing its first and last pages) readable.
func TestWritePayloadNeighbours(t *testing.T) {
	spec := &Spec{Sessions: []string{"s"}}
	for i, n := range []int{3, 5<<20 + 1, 7, 9<<20 + 3, 1} {
		spec.Records = append(spec.Records, Record{Entry: Entry{Line: uint64(i + 1), Turn: uint32(i)}, Payload: payloadFor(i, n)})
	}
	r, _ := openTemp(t, spec, OpenOptions{})
	defer r.Close()
	for round := range 2 {
		for i, rec := range spec.Records {
			var buf bytes.Buffer
			if _, err := r.WritePayload(&buf, i); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), rec.Payload) || !bytes.Equal(r.Payload(i), rec.Payload) {
				t.Fatalf("round %d: record %d differs after WritePayload", round, i)
			}
		}
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}
