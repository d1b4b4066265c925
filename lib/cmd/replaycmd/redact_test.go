package replaycmd

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/store"
)

// TestAPIKeyInNoOutput: a server whose error bodies echo the Authorization
// header gets error records, and the key from --api-key-env appears in no
// file of the run directory (records.jsonl and every export), as the help
// promises.
func TestAPIKeyInNoOutput(t *testing.T) {
	const key = "sk-proj-5ecret-0123456789"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error %s"}}`, r.Header.Get("Authorization"), key)
	})}
	go hs.Serve(l)
	defer hs.Close()

	dir := t.TempDir()
	spec := &store.Spec{Meta: map[string]string{"path": "/v1/chat/completions", "streaming": "true", "endpoint": "chat", "model": "m"}}
	for i := range 3 {
		spec.Sessions = append(spec.Sessions, fmt.Sprintf("s%d", i))
		spec.Records = append(spec.Records, store.Record{Entry: store.Entry{Line: uint64(i + 1), Session: uint32(i)},
			Payload: []byte(`{"messages":[{"role":"user","content":"q"}],"model":"m","stream":true,"max_tokens":2}`)})
	}
	st := filepath.Join(dir, "s.aipk")
	if err := store.WriteSpec(st, spec); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AIPERF_TEST_KEY", key)
	out := filepath.Join(dir, "run")
	app := New()
	var stdout, stderr bytes.Buffer
	app.Writer, app.ErrWriter = &stdout, &stderr
	code := base.Main(app, []string{"aiperf-replay", "--url", "http://" + l.Addr().String(), "--api-key-env", "AIPERF_TEST_KEY", "--max-error-rate", "100", "-o", out, st})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(files) < 4 {
		t.Fatalf("outputs %v", files)
	}
	var sawError bool
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the key", filepath.Base(f))
		}
		sawError = sawError || bytes.Contains(b, []byte("Incorrect API key provided: Bearer [redacted]"))
	}
	if !sawError {
		t.Error("the error message is not in the outputs")
	}
	if bytes.Contains(stdout.Bytes(), []byte(key)) || bytes.Contains(stderr.Bytes(), []byte(key)) {
		t.Error("the key is on stdout or stderr")
	}
}

// TestAPIKeyEncodedInNoOutput: a server that echoes the key \u-escaped and
// in base64 (of the key, and of "Bearer KEY") gets none of those forms into
// the run directory or the HTML page.
func TestAPIKeyEncodedInNoOutput(t *testing.T) {
	const key = "sk-proj-5ecret-0123456789"
	var uesc strings.Builder
	for _, r := range key {
		fmt.Fprintf(&uesc, `\u%04x`, r)
	}
	forms := []string{key, uesc.String(), base64.StdEncoding.EncodeToString([]byte(key)),
		base64.StdEncoding.EncodeToString([]byte("Bearer " + key)), base64.RawURLEncoding.EncodeToString([]byte(key))}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"detail":"%s","seen":"%s","auth":"%s","k":"%s"}`, forms[1], forms[2], forms[3], forms[4])
	})}
	go hs.Serve(l)
	defer hs.Close()

	dir := t.TempDir()
	spec := &store.Spec{Meta: map[string]string{"path": "/v1/chat/completions", "streaming": "true", "endpoint": "chat", "model": "m"}}
	for i := range 2 {
		spec.Sessions = append(spec.Sessions, fmt.Sprintf("s%d", i))
		spec.Records = append(spec.Records, store.Record{Entry: store.Entry{Line: uint64(i + 1), Session: uint32(i)},
			Payload: []byte(`{"messages":[{"role":"user","content":"q"}],"model":"m","stream":true,"max_tokens":2}`)})
	}
	st := filepath.Join(dir, "s.aipk")
	if err := store.WriteSpec(st, spec); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AIPERF_TEST_KEY", key)
	out := filepath.Join(dir, "run")
	app := New()
	var stdout, stderr bytes.Buffer
	app.Writer, app.ErrWriter = &stdout, &stderr
	code := base.Main(app, []string{"aiperf-replay", "--url", "http://" + l.Addr().String(), "--api-key-env", "AIPERF_TEST_KEY", "--max-error-rate", "100",
		"--html", filepath.Join(dir, "page.html"), "-o", out, st})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	files = append(files, filepath.Join(dir, "page.html"))
	var sawError bool
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range forms {
			if bytes.Contains(b, []byte(form)) {
				t.Errorf("%s holds the key as %s", filepath.Base(f), form)
			}
		}
		sawError = sawError || bytes.Contains(b, []byte(`detail`))
	}
	if !sawError {
		t.Error("the error message is not in the outputs")
	}
}
