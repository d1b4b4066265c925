package store

import (
	"os"
	"runtime/debug"
	"testing"

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
