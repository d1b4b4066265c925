package store_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/aiperf/toolkit/lib/store"
)

func Example() {
	dir, err := os.MkdirTemp("", "store-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.aipk")

	w, err := store.Create(path, store.WriterOptions{Meta: map[string]string{"model": "qwen3"}})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort() // a no-op after Commit
	a := w.AddSession("conv-a")
	b := w.AddSession("conv-b")
	for _, rec := range []struct {
		e       store.Entry
		payload string
	}{
		{store.Entry{Line: 1, Session: a, Turn: 0, Flags: store.FlagTimestamp}, `{"prompt":"hi"}`},
		{store.Entry{Line: 2, Session: b, Turn: 0, Flags: store.FlagTimestamp, TimeNS: 1e6}, `{"prompt":"yo"}`},
		{store.Entry{Line: 3, Session: a, Turn: 1, Flags: store.FlagDelay, TimeNS: 5e8}, `{"prompt":"and again"}`},
	} {
		if err := w.Add(rec.e, []byte(rec.payload)); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		log.Fatal(err)
	}

	r, err := store.Open(path, store.DefaultOpenOptions())
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	i, _ := r.Lookup(a, 1)
	fmt.Printf("%d records in %d sessions, model %s\n", r.Len(), r.NumSessions(), r.Meta()["model"])
	fmt.Printf("%s turn 1 is record %d, %v after turn 0: %s\n", r.SessionID(a), i, r.Entry(i).TimeNS/1e6, r.Payload(i))
	fmt.Println("verify:", r.Verify())
	// Output:
	// 3 records in 2 sessions, model qwen3
	// conv-a turn 1 is record 2, 500 after turn 0: {"prompt":"and again"}
	// verify: <nil>
}
