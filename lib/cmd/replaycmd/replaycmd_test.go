package replaycmd

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/lib/store"
)

// mockURL serves a fast aiperf-mock on loopback.
func mockURL(t testing.TB) string {
	t.Helper()
	srv, err := mock.New(mock.Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := srv.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return "http://" + l.Addr().String()
}

// run runs aiperf-replay with args and returns its stderr and exit code.
func run(t testing.TB, args ...string) (string, int) {
	t.Helper()
	app := New()
	var out, errb bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errb
	code := base.Main(app, append([]string{"aiperf-replay"}, args...))
	return errb.String(), code
}

// storeOf writes a store of two chat bodies whose "stream" member is
// stream and whose metadata says streaming, flagged verbatim or not.
func storeOf(t testing.TB, streaming, stream, verbatim bool) string {
	t.Helper()
	meta := store.Meta{Endpoint: "chat", Path: "/v1/chat/completions", Model: "m", Streaming: streaming}
	spec := &store.Spec{Meta: meta.Map(), Sessions: []string{"a", "b"}}
	body := `{"messages":[{"role":"user","content":"hi"}],"model":"m","max_tokens":4`
	if stream {
		body += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	body += "}"
	for i := range 2 {
		e := store.Entry{Line: uint64(i + 1), Session: uint32(i), InputTokens: 1, Flags: store.FlagMaxTokens, MaxTokens: 4}
		if verbatim {
			e.Flags |= store.FlagVerbatim
		}
		spec.Records = append(spec.Records, store.Record{Entry: e, Payload: []byte(body)})
	}
	path := filepath.Join(t.TempDir(), "s.aipk")
	if err := store.WriteSpec(path, spec); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStreamingFollowsAnswers: the streaming metrics follow what the
// answers were (text/event-stream), with a warning when the store's
// metadata says otherwise; a store of verbatim bodies is judged by them
// (stores packed before pack read the bodies said streaming: false).
func TestStreamingFollowsAnswers(t *testing.T) {
	url := mockURL(t)
	for _, tc := range []struct {
		name                   string
		meta, stream, verbatim bool
		wantTTFT               bool
		warn                   string
	}{
		{"metadata says no, answers streamed", false, true, false, true,
			"warning: the store's metadata says its bodies are not streamed (streaming: false), but 2 of the 2 answers were server-sent events"},
		{"metadata says yes, answers whole", true, false, false, false,
			"warning: the store's bodies ask for streamed answers, but none of the 2 answers was (text/event-stream)"},
		{"old verbatim store", false, true, true, true, ""},
		{"agreeing", true, true, false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			stderr, code := run(t, "-q", "--url", url, "-o", out, storeOf(t, tc.meta, tc.stream, tc.verbatim))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if tc.warn == "" && stderr != "" || !strings.Contains(stderr, tc.warn) {
				t.Errorf("stderr %q, want %q", stderr, tc.warn)
			}
			b, err := os.ReadFile(filepath.Join(out, exportJSONFile))
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(b, []byte(`"time_to_first_token": {`)); got != tc.wantTTFT {
				t.Errorf("time_to_first_token in the export: %v, want %v", got, tc.wantTTFT)
			}
			// report decides as the run did
			app := New()
			var sout, serr bytes.Buffer
			app.Writer, app.ErrWriter = &sout, &serr
			if code := base.Main(app, []string{"aiperf-replay", "report", filepath.Join(out, recordsFile)}); code != 0 {
				t.Fatalf("report: exit %d: %s", code, serr.String())
			}
			if got := strings.Contains(sout.String(), "Time to First Token"); got != tc.wantTTFT {
				t.Errorf("report: TTFT shown %v, want %v", got, tc.wantTTFT)
			}
		})
	}
}
