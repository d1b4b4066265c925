package replaycmd

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/aiperf/toolkit/lib/store"
)

// mixStore is a store of sessions of the given turns, in order.
func mixStore(t *testing.T, turns ...int) *store.Reader {
	t.Helper()
	spec := &store.Spec{Meta: map[string]string{store.MetaPath: "/v1/chat/completions"}}
	for s, n := range turns {
		spec.Sessions = append(spec.Sessions, fmt.Sprintf("s%d", s))
		for k := range n {
			e := store.Entry{Line: uint64(len(spec.Records) + 1), Session: uint32(s), Turn: uint32(k), InputTokens: 1}
			spec.Records = append(spec.Records, store.Record{Entry: e, Payload: []byte(`{"messages":[{"role":"user","content":"x"}],"model":"m"}`)})
		}
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

// TestSessionMix: a step's sessions a request are those of the sessions it
// played, each whole, however much of each it sent (a short closed loop
// cuts its sessions: counting first turns over requests read 26 of 40
// on a store of 1- and 5-turn sessions, 1/3 in truth; review finding); a
// rate step's size is the requests of the sessions it starts after the
// warmup's, in store order and around.
func TestSessionMix(t *testing.T) {
	st := mixStore(t, 1, 5, 1, 5, 1, 5) // 18 requests, 6 sessions
	if got := sessionsPerRequest(st, map[uint32]bool{0: true, 1: true, 2: true, 3: true}); got != 4.0/12 {
		t.Errorf("sessions 0-3: %v a request, want 1/3", got)
	}
	if got := sessionsPerRequest(st, nil); got != 0 {
		t.Errorf("no session: %v", got)
	}
	req := sessionRequests(st)
	for _, c := range []struct{ warmup, n, want int64 }{
		{0, 1, 1}, {0, 2, 6}, {0, 6, 18}, {0, 7, 19}, {0, 13, 37},
		{1, 1, 5},  // the warmup's one request uses up session 0
		{2, 1, 1},  // ... and part of session 1: it starts at session 2
		{6, 2, 6},  // sessions 0 and 1 used up
		{18, 1, 1}, // a whole pass
	} {
		if got := req(c.warmup, c.n); got != c.want {
			t.Errorf("warmup %d, %d sessions: %d requests, want %d", c.warmup, c.n, got, c.want)
		}
	}
}
