package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
)

// startMock serves a mock with cfg on a free loopback port.
func startMock(t testing.TB, cfg mock.Config) (string, *mock.Server) {
	t.Helper()
	srv, err := mock.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, srv), srv
}

// serve serves h on a free loopback port and returns its URL.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return "http://" + l.Addr().String()
}

// chatBody is a streamed chat request of maxTokens tokens.
func chatBody(content string, maxTokens int, usage bool) []byte {
	b := fmt.Appendf(nil, `{"messages":[{"role":"user","content":%q}],"model":"m","stream":true,"max_tokens":%d`, content, maxTokens)
	if usage {
		b = append(b, `,"stream_options":{"include_usage":true}`...)
	}
	return append(b, '}')
}

// openSpec writes spec to a temporary store and opens it.
func openSpec(t testing.TB, spec *store.Spec) *store.Reader {
	t.Helper()
	if spec.Meta == nil {
		spec.Meta = map[string]string{store.MetaPath: "/v1/chat/completions", store.MetaStreaming: "true"}
	}
	path := filepath.Join(t.TempDir(), "s.aipk")
	if err := store.WriteSpec(path, spec); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path, store.DefaultOpenOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// singleTurns is a store of n one-turn sessions, timestamps every gap when
// gap > 0.
func singleTurns(t testing.TB, n int, gap time.Duration, body func(i int) []byte) *store.Reader {
	spec := &store.Spec{}
	for i := range n {
		spec.Sessions = append(spec.Sessions, fmt.Sprintf("s%d", i))
		e := store.Entry{Line: uint64(i + 1), Session: uint32(i), InputTokens: 5}
		if gap > 0 {
			e.Flags |= store.FlagTimestamp
			e.TimeNS = int64(i) * int64(gap)
		}
		spec.Records = append(spec.Records, store.Record{Entry: e, Payload: body(i)})
	}
	return openSpec(t, spec)
}

// replayAll runs a replay and decodes its records.
func replayAll(t testing.TB, ctx context.Context, st *store.Reader, o Options) ([]result.Record, *Stats) {
	t.Helper()
	var buf bytes.Buffer
	o.Results = &buf
	stats, err := Run(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, &buf), stats
}

func decodeAll(t testing.TB, r io.Reader) []result.Record {
	t.Helper()
	d := result.NewDecoder(r, "records")
	var out []result.Record
	for {
		var rec result.Record
		err := d.Next(&rec)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
