package store

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
)

// concurrentSpec is ~2,000 records of 0..64 KiB whose bytes derive from the
// record number, in interleaved sessions.
func concurrentSpec() *Spec {
	return genSpec(42, 700, 5, 64<<10, true)
}

// TestConcurrentReads has 16 goroutines read random records from one Reader
// and check every byte: reads share no file position (the seed's bug), so
// under -race this must be clean and every payload must be its own.
func TestConcurrentReads(t *testing.T) {
	spec := concurrentSpec()
	r, _ := openTemp(t, spec, OpenOptions{Prefault: true})
	reads := 400
	if testing.Short() {
		reads = 100
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range reads {
				i := rng.IntN(r.Len())
				want := spec.Records[i]
				if e := r.Entry(i); e != want.Entry {
					errs <- "entry mismatch"
					return
				}
				if got := r.Payload(i); !bytes.Equal(got, want.Payload) {
					errs <- "payload mismatch"
					return
				}
				if j, ok := r.Lookup(want.Session, want.Turn); !ok || j != i {
					errs <- "lookup mismatch"
					return
				}
				if r.SessionID(want.Session) != spec.Sessions[want.Session] {
					errs <- "session id mismatch"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if len(spec.Records) < 1500 {
		t.Errorf("spec has %d records, want about 2000", len(spec.Records))
	}
}

func TestPrefaultSameData(t *testing.T) {
	spec := genSpec(11, 100, 4, 20000, true)
	path := writeTemp(t, spec)
	var got [2]*Spec
	for k, pf := range []bool{false, true} {
		r, err := Open(path, OpenOptions{Prefault: pf})
		if err != nil {
			t.Fatalf("Open(prefault %v): %v", pf, err)
		}
		got[k] = ReadSpec(r)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if d := specDiff(got[1], got[0]); d != "" {
		t.Errorf("prefault on vs off: %s", d)
	}
	if d := specDiff(got[0], spec); d != "" {
		t.Errorf("prefault off vs spec: %s", d)
	}
}

func TestPrefaultAnySlice(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4097, 1 << 20} {
		b := make([]byte, n+3)[3:] // rarely page-aligned: exercises the fallback
		if err := Prefault(b); err != nil {
			t.Errorf("Prefault(%d bytes): %v", n, err)
		}
	}
}

func TestDefaultOpenOptions(t *testing.T) {
	tests := []struct {
		env  string
		set  bool
		want bool
	}{
		{"", false, true},
		{"", true, true},
		{"1", true, true},
		{"true", true, true},
		{"0", true, false},
		{"false", true, false},
		{"FALSE", true, false},
		{" off ", true, false},
	}
	for _, tt := range tests {
		if tt.set {
			t.Setenv(PrefaultEnv, tt.env)
		} else {
			t.Setenv(PrefaultEnv, "")
			os.Unsetenv(PrefaultEnv)
		}
		if got := DefaultOpenOptions().Prefault; got != tt.want {
			t.Errorf("%s=%q (set %v): got Prefault %v, want %v", PrefaultEnv, tt.env, tt.set, got, tt.want)
		}
	}
}

func TestReaderClose(t *testing.T) {
	r, _ := openTemp(t, genSpec(12, 3, 2, 10, false), OpenOptions{})
	meta := r.Meta()
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: got %v, want nil", err)
	}
	if got := r.Len(); got != 0 {
		t.Errorf("Len after Close: got %d, want 0", got)
	}
	if _, ok := r.Lookup(0, 0); ok {
		t.Errorf("Lookup after Close: got ok, want false")
	}
	if got := r.Meta(); len(got) != len(meta) {
		t.Errorf("Meta after Close: got %v, want %v", got, meta)
	}
}

func TestMetaIsACopy(t *testing.T) {
	r, _ := openTemp(t, &Spec{Meta: map[string]string{"a": "1"}}, OpenOptions{})
	r.Meta()["a"] = "2"
	if got := r.Meta()["a"]; got != "1" {
		t.Errorf("Meta()[a] after changing a copy: got %q, want %q", got, "1")
	}
}

func TestEntryOutOfRangePanics(t *testing.T) {
	r, _ := openTemp(t, genSpec(13, 2, 1, 10, false), OpenOptions{})
	for _, i := range []int{-1, r.Len(), math.MaxInt} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Entry(%d): got no panic, want one", i)
				}
			}()
			r.Entry(i)
		}()
	}
}

func TestOpenMissing(t *testing.T) {
	if _, err := Open(t.TempDir()+"/nope.aipk", OpenOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: got %v, want an error wrapping fs.ErrNotExist", err)
	}
}

// TestOpenBytesUnaligned opens images at every alignment: the in-place
// column views need 8-byte alignment and the portable path must agree.
func TestOpenBytesUnaligned(t *testing.T) {
	for _, spec := range []*Spec{genSpec(17, 300, 4, 100, true), genSpec(18, 3000, 1, 10, false)} {
		b := image(t, spec)
		for shift := range 8 {
			img := append(make([]byte, shift, len(b)+shift), b...)[shift:]
			r, err := OpenBytes(img)
			if err != nil {
				t.Fatalf("shift %d: %v", shift, err)
			}
			checkReader(t, r, spec)
		}
	}
}
