package mock

import (
	"container/heap"
	"context"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// simEvent is an arrival (id >= 0) or a completion (id < 0) on the virtual
// clock.
type simEvent struct {
	t  time.Duration
	id int
}

type simHeap []simEvent

func (h simHeap) Len() int { return len(h) }
func (h simHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].id < h[j].id // completions (negative) before arrivals at one moment
}
func (h simHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *simHeap) Push(x any)   { *h = append(*h, x.(simEvent)) }
func (h *simHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// simulate runs the slot scheduler on a virtual clock: requests arrive at
// the given offsets, each holds its slot for service, and the completion
// releases it with its intended end, as the server's handler does. It
// returns each request's admission offset (by arrival index) and the order
// of admission.
func simulate(t *testing.T, n int, arrivals []time.Duration, service time.Duration) (starts []time.Duration, order []int) {
	t.Helper()
	t0 := time.Unix(1000, 0)
	s := newSlots(n)
	ids := map[*slotWait]int{}
	var h simHeap
	starts = make([]time.Duration, len(arrivals))
	s.onGrant = func(w *slotWait) {
		id := ids[w]
		starts[id] = w.start.Sub(t0)
		order = append(order, id)
		heap.Push(&h, simEvent{t: w.start.Sub(t0) + service, id: -1})
	}
	for i, a := range arrivals {
		heap.Push(&h, simEvent{t: a, id: i})
	}
	for h.Len() > 0 {
		e := heap.Pop(&h).(simEvent)
		if e.id < 0 {
			s.release(t0.Add(e.t))
			continue
		}
		w := &slotWait{arrived: t0.Add(e.t), granted: make(chan struct{})}
		ids[w] = e.id // before add, which may grant it
		s.add(w)
	}
	if run, wait := s.load(); run != 0 || wait != 0 {
		t.Fatalf("after the simulation: %d running, %d waiting, want 0 and 0", run, wait)
	}
	return starts, order
}

// TestSlotsBurst: a burst of requests at once is admitted in FIFO order,
// n at a time, request k waiting floor(k/n)·S (the first n's arrival spread aside), and the server completes
// n/S requests per second: the closed form, exactly, on a virtual clock.
func TestSlotsBurst(t *testing.T) {
	const n, m = 4, 100
	service := 25 * time.Millisecond
	arrivals := make([]time.Duration, m)
	for i := range arrivals {
		arrivals[i] = time.Duration(i) * time.Microsecond // in this order, all within 0.1 ms
	}
	starts, order := simulate(t, n, arrivals, service)
	for i, id := range order {
		if id != i {
			t.Fatalf("admission %d went to request %d: want FIFO order", i, id)
		}
	}
	for k, st := range starts {
		// Slot k%n's first holder came at arrivals[k%n]; each later one
		// starts at the intended end of the one before.
		want := arrivals[k%n] + time.Duration(k/n)*service
		if st != want {
			t.Errorf("request %d admitted at %v, want %v", k, st, want)
		}
	}
	end := starts[m-1] + service
	got := float64(m) / end.Seconds()
	want := float64(n) / service.Seconds()
	if math.Abs(got-want)/want > 0.01 {
		t.Errorf("throughput %.2f requests/s, want the closed form %d/%v = %.2f", got, n, service, want)
	}
}

// TestSlotsOfferedLoad: constant arrivals below the capacity never wait;
// above it, the waits grow with every request, by the difference of the two
// gaps (the queue of an overloaded server).
func TestSlotsOfferedLoad(t *testing.T) {
	const n, m = 2, 60
	service := 10 * time.Millisecond // capacity 200 requests/s
	for _, tc := range []struct {
		rate float64
		grow bool
	}{{150, false}, {190, false}, {250, true}, {400, true}} {
		gap := time.Duration(float64(time.Second) / tc.rate)
		arrivals := make([]time.Duration, m)
		for i := range arrivals {
			arrivals[i] = time.Duration(i) * gap
		}
		starts, _ := simulate(t, n, arrivals, service)
		last := starts[m-1] - arrivals[m-1]
		if !tc.grow && last != 0 {
			t.Errorf("rate %v below the capacity 200/s: the last request waited %v, want 0", tc.rate, last)
		}
		if tc.grow {
			// Request k starts at about k·S/n: its wait is k·(S/n - gap).
			want := time.Duration(m-1) * (service/n - gap)
			if d := last - want; d < -service || d > service {
				t.Errorf("rate %v above the capacity: the last request waited %v, want %v ± %v", tc.rate, last, want, service)
			}
		}
	}
}

// TestSlotsLeave: a request whose client leaves while queued leaves the
// queue; one admitted as it left hands its slot on.
func TestSlotsLeave(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := newSlots(1)
	a := s.enter(t0)
	if _, ok := s.wait(context.Background(), a); !ok {
		t.Fatal("the first request was not admitted")
	}
	b := s.enter(t0.Add(time.Millisecond))
	c := s.enter(t0.Add(2 * time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := s.wait(ctx, b); ok {
		t.Fatal("a request whose client left was admitted")
	}
	if run, wait := s.load(); run != 1 || wait != 1 {
		t.Fatalf("after b left: %d running, %d waiting, want 1 and 1", run, wait)
	}
	s.release(t0.Add(10 * time.Millisecond))
	start, ok := s.wait(context.Background(), c)
	if !ok || !start.Equal(t0.Add(10*time.Millisecond)) {
		t.Fatalf("c admitted at %v (%v), want at a's end, 10ms", start.Sub(t0), ok)
	}
	s.release(start.Add(time.Millisecond))
	if run, wait := s.load(); run != 0 || wait != 0 {
		t.Fatalf("at the end: %d running, %d waiting, want 0 and 0", run, wait)
	}
}

// TestSlotsServer: on a real server with one slot, requests sent one after
// the other while the first decodes are served in FIFO order, and the wait
// shows in the TTFT: the third request's first token comes at least one
// whole service time after it was sent. (Lower bounds only.)
func TestSlotsServer(t *testing.T) {
	// One slot, 100 tokens/s, 20 tokens: a reply holds the slot 200 ms.
	url, srv := start(t, Config{Slots: 1, TokenRate: 100})
	const service = 200 * time.Millisecond
	body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":20,"stream":true}`
	type res struct {
		ttft, end time.Duration
		err       error
	}
	t0 := time.Now()
	results := make([]res, 3)
	var wg sync.WaitGroup
	for i := range results {
		// Each next request goes once the one before is in (running or queued).
		for deadline := time.Now().Add(30 * time.Second); ; {
			run, wait := srv.SlotLoad()
			if run+wait == i {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("request %d never reached the server", i-1)
			}
			time.Sleep(time.Millisecond)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent := time.Now()
			resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			buf := make([]byte, 1)
			if _, err := io.ReadFull(resp.Body, buf); err != nil { // the first chunk's first byte
				results[i].err = err
				return
			}
			results[i].ttft = time.Since(sent)
			io.Copy(io.Discard, resp.Body)
			results[i].end = time.Since(t0)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
	}
	if !(results[0].end < results[1].end && results[1].end < results[2].end) {
		t.Errorf("replies ended at %v, %v, %v: want FIFO order", results[0].end, results[1].end, results[2].end)
	}
	if results[2].ttft < service {
		t.Errorf("the third request's TTFT %v: want the wait for the two before it (at least %v)", results[2].ttft, service)
	}
	if results[0].ttft < 10*time.Millisecond {
		t.Errorf("the first request's TTFT %v: want at least one decode step, 10ms", results[0].ttft)
	}
}
