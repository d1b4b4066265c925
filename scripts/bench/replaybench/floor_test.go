//go:build linux

package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/store"
)

// TestFloorsReadEveryStream: the epoll and io_uring floors send 300
// requests over 8 connections to a server that streams each answer in
// flushed chunks (as serve does), and return once every answer has ended.
// A floor that missed a stream's end would wait until the test's deadline;
// one that miscounted would fail its send or receive checks.
func TestFloorsReadEveryStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.aipk")
	spec := &store.Spec{Meta: map[string]string{store.MetaEndpoint: "chat", store.MetaPath: "/v1/chat/completions", store.MetaStreaming: "true"}}
	for i := range 5 {
		spec.Sessions = append(spec.Sessions, "s"+strconv.Itoa(i))
		body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("x", 100*i) + `"}]}`
		spec.Records = append(spec.Records, store.Record{Entry: store.Entry{Line: uint64(i + 1), Session: uint32(i), InputTokens: 5}, Payload: []byte(body)})
	}
	if err := store.WriteSpec(path, spec); err != nil {
		t.Fatal(err)
	}
	var writes [][]byte
	for _, s := range []string{"a", "b", "c"} {
		writes = append(writes, []byte(`data: {"choices":[{"index":0,"delta":{"content":"`+s+`"}}]}`+"\n\n"))
	}
	writes = append(writes, []byte("data: {\"choices\":[],\"usage\":{\"completion_tokens\":3}}\n\ndata: [DONE]\n\n"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, b := range writes {
			w.Write(b)
			rc.Flush()
		}
	}))
	defer srv.Close()
	for _, f := range []struct {
		name string
		run  func([]string) error
	}{{"epoll", floor}, {"io_uring", uringFloor}} {
		err := f.run([]string{path, srv.URL, "8", "300"})
		if f.name == "io_uring" && err != nil && strings.HasPrefix(err.Error(), "io_uring_setup") {
			t.Logf("io_uring is not available here: %v", err)
			continue
		}
		if err != nil {
			t.Errorf("%s floor: %v", f.name, err)
		}
	}
}
