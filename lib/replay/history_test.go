package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/lib/store"
)

// TestHistoryInputTokens: a turn sent with the conversation spliced in
// records the tokens of the body sent (the earlier turns' input tokens and
// the replies' output tokens besides its own), so that the server's
// prompt_tokens is compared with what it got: the turn's own count made
// every later turn a false token-count discrepancy. A turn sent as stored
// keeps the store's count.
func TestHistoryInputTokens(t *testing.T) {
	url, _ := startMock(t, mock.Config{Fast: true}) // no tokenizer: a token per 4 bytes of prompt text
	text := strings.Repeat("abcd", 50)              // 50 tokens
	for _, tc := range []struct {
		mode    string
		spliced bool
	}{{HistoryOn, true}, {HistoryOff, false}} {
		spec := &store.Spec{Sessions: []string{"a", "b"}}
		for s := range 2 {
			for turn := range 3 {
				body := fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"model":"m","stream":true,"max_tokens":4,"stream_options":{"include_usage":true}}`, text)
				spec.Records = append(spec.Records, store.Record{
					Entry:   store.Entry{Line: uint64(3*s + turn + 1), Session: uint32(s), Turn: uint32(turn), InputTokens: 50, Flags: store.FlagMaxTokens, MaxTokens: 4},
					Payload: []byte(body)})
			}
		}
		recs, _ := replayAll(t, context.Background(), openSpec(t, spec), Options{URL: url, History: tc.mode, Concurrency: 2})
		if len(recs) != 6 {
			t.Fatalf("%s: %d records, want 6", tc.mode, len(recs))
		}
		sent := map[string]int64{} // per session: tokens of the turns and replies so far
		for _, r := range recs {
			if r.Err != nil || r.Usage == nil {
				t.Fatalf("%s: record %d: %v, usage %v", tc.mode, r.Record, r.Err, r.Usage)
			}
			want := int64(50)
			if tc.spliced {
				want += sent[r.Session]
				sent[r.Session] = want + r.OutputTokens
			}
			if r.InputTokens != want {
				t.Errorf("%s: session %s turn %d: input_tokens %d, want %d", tc.mode, r.Session, r.Turn, r.InputTokens, want)
			}
			// The server counted what it got: within the 10% the
			// discrepancy warning allows.
			if d := float64(r.Usage.PromptTokens-r.InputTokens) / float64(r.InputTokens); d > 0.1 || d < -0.1 {
				t.Errorf("%s: session %s turn %d: prompt_tokens %d against input_tokens %d", tc.mode, r.Session, r.Turn, r.Usage.PromptTokens, r.InputTokens)
			}
		}
	}
}
