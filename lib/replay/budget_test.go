package replay

import (
	"context"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/mock"
)

// A run whose request budget is spent ends when its last request does,
// even when the dispatcher drew the next start (here ~1000 s away, at
// --rate 0.001) before the session that spends the budget took its
// request: the budget's end wakes it. It waited for that start before
// (seen as a testscript that hung on a loaded machine).
func TestBudgetEndsWithoutNextStart(t *testing.T) {
	url, _ := startMock(t, mock.Config{Fast: true})
	st := singleTurns(t, 2, 0, func(i int) []byte { return chatBody("q", 2, true) })
	testHookSessionStart = func() { time.Sleep(50 * time.Millisecond) }
	t.Cleanup(func() { testHookSessionStart = nil })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recs, stats := replayAll(t, ctx, st, Options{URL: url, Schedule: ScheduleRate, Rate: 0.001, RequestCount: 1})
	if stats.Interrupted || len(recs) != 1 || stats.Sent != 1 {
		t.Fatalf("interrupted %v (the run waited for a start past its budget), %d records, %d sent", stats.Interrupted, len(recs), stats.Sent)
	}
}
