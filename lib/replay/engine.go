package replay

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/internal/pace"
	"github.com/aiperf/toolkit/lib/internal/redact"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/aiperf/toolkit/lib/tokenizer"
)

// clock gives wall-clock nanoseconds that advance with the monotonic
// clock: one wall-clock reading at the start, monotonic offsets after it,
// so differences between two readings are true durations.
type clock struct {
	base     time.Time
	baseUnix int64
}

func newClock() clock {
	t := time.Now()
	return clock{base: t, baseUnix: t.UnixNano()}
}

func (c *clock) now() int64 { return c.baseUnix + int64(time.Since(c.base)) }

// at converts a reading back to a time.Time (with a monotonic reading) for
// deadlines.
func (c *clock) at(ns int64) time.Time { return c.base.Add(time.Duration(ns - c.baseUnix)) }

// session is one run of a store session (a store session may run more than
// once when the schedule goes around the store).
type session struct {
	s       uint32 // store session
	turns   int
	turn    int   // next turn to send
	prevEnd int64 // end of the previous turn
	corr    string
	num     int64 // the run's number, in start order
	id      string
	hist    *history
	slot    bool  // holds a concurrency slot
	wait    int64 // the ceiling's hold on the first turn (start.ceilingWait)
	conn    *conn // ReuseSticky: the connection the next turn goes on
}

// due is a later turn waiting for its time.
type due struct {
	at   int64
	sess *session
}

type dueHeap []due

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(due)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = due{}
	*h = old[:len(old)-1]
	return x
}

type runner struct {
	p    *Plan
	o    Options // p.Options
	st   *store.Reader
	ep   endpoint
	pool *pool
	clk  clock
	now  func() int64 // clk.now, bound once (a method value allocates)
	// sessHdr starts the session id header line (nil: none is sent).
	sessHdr []byte
	sink    *sink
	mode    string // p.Schedule
	runID   string
	hdr     []byte // request head up to "Content-Length: "
	t0      int64  // the schedule's start (clock reading)
	zero    int64  // fixed: the trace time that maps to t0

	// the start of session runs
	gen genState

	limit  int64 // requests to send in all (warmup included); MaxInt64 = no limit
	issued atomic.Int64

	takeMu   sync.Mutex
	stopped  atomic.Bool
	stopCh   chan struct{}
	stopOnce sync.Once
	abortCtx context.Context
	abort    context.CancelFunc

	inflight sync.WaitGroup // requests between take and their result
	workers  sync.WaitGroup // every goroutine that may touch the store
	active   atomic.Int64   // session runs started and not ended
	wake     chan struct{}
	waiter   atomic.Pointer[pace.Waiter] // the dispatcher's, for signal

	hmu  sync.Mutex
	dues dueHeap

	ceiling      int64
	free         atomic.Int64
	ceilingWaits atomic.Int64
	ceilingMax   atomic.Int64

	states stateList
	tok    lazyTokenizer
	secret *redactor // nil: no credentials to keep out of the results

	errors, cancelled atomic.Int64
}

// genState hands out session starts.
type genState struct {
	mu        sync.Mutex
	order     []uint32 // the sessions to start (fixed: by first timestamp; a shard: its own); nil: every session in store order
	n         int64    // sessions per pass
	pos       int64
	cycle     bool
	exhausted atomic.Bool
	// fixed
	times []int64 // intended offset of order[i] from t0, ns
	// rate
	arr  *arrivals
	next int64 // intended time of the next start
}

// Run replays st as o says (NewPlan, then Plan.Run).
func Run(ctx context.Context, st *store.Reader, o Options) (*Stats, error) {
	p, err := NewPlan(st, o)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx)
}

// Run replays the plan until the schedule ends, the request budget is
// spent, Duration passes or ctx is cancelled (Stats.Interrupted). Every
// request sent has its result written before Run returns, and no goroutine
// started by Run outlives it, so the store may be closed afterwards. A
// plan runs once.
func (p *Plan) Run(ctx context.Context) (*Stats, error) {
	return newRunner(p).run(ctx)
}

func newRunner(p *Plan) *runner {
	o := p.Options
	r := &runner{
		p:      p,
		o:      o,
		st:     p.Store,
		ep:     p.ep,
		mode:   p.Schedule,
		zero:   p.zero,
		limit:  p.Limit,
		stopCh: make(chan struct{}),
		wake:   make(chan struct{}, 1),
	}
	r.abortCtx, r.abort = context.WithCancel(context.Background())
	dialTimeout := 30 * time.Second
	if o.Timeout > 0 && o.Timeout < dialTimeout {
		dialTimeout = o.Timeout
	}
	r.pool = newPool(r.ep, dialTimeout)
	var id [8]byte
	rand.Read(id[:])
	r.runID = hex.EncodeToString(id[:])
	r.hdr = r.header()
	r.sessHdr = sessionHeader(&o)
	r.secret = newRedactor(o.APIKey, o.Headers)
	r.tok.load = o.Tokenizer
	r.ceiling = int64(o.Concurrency)
	r.free.Store(r.ceiling)

	r.gen.n = int64(r.st.NumSessions())
	if p.sessions != nil {
		r.gen.order, r.gen.n = p.sessions, int64(len(p.sessions))
	}
	r.gen.cycle = r.mode != ScheduleFixed && r.limit > p.records()
	switch r.mode {
	case ScheduleFixed:
		r.gen.order, r.gen.times, r.gen.n = p.order, p.times, int64(len(p.order))
	case ScheduleRate:
		// Each shard draws its own arrivals: shards of one seed would send
		// in lockstep, and N copies of one process are not a process of N
		// times the rate.
		r.gen.arr = newArrivals(o.Arrival, o.Rate, o.Smoothness, o.Seed+uint64(o.Shard))
	}
	return r
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scale divides a trace duration by the speedup.
func (r *runner) scale(d int64) int64 { return r.p.scale(d) }

// nextStart returns the next session run to start.
func (r *runner) nextStart() (st start, ok bool) {
	g := &r.gen
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.exhausted.Load() || r.stopped.Load() || r.issued.Load() >= r.limit {
		g.exhausted.Store(true)
		return st, false
	}
	if g.pos >= g.n && !g.cycle {
		g.exhausted.Store(true)
		return st, false
	}
	st.run = g.pos
	k := g.pos % g.n
	g.pos++
	if g.order != nil {
		st.s = g.order[k]
	} else {
		st.s = uint32(k)
	}
	switch r.mode {
	case ScheduleFixed:
		st.at = r.t0 + g.times[k]
	case ScheduleRate:
		if g.pos == 1 {
			g.next = r.t0
		} else {
			g.next = satAdd(g.next, g.arr.gap())
		}
		st.at = g.next
	}
	return st, true
}

// start is a session run to start.
type start struct {
	s   uint32 // store session
	run int64  // the run's number (sessions in start order, counted over passes)
	at  int64  // intended start; 0 = as soon as a slot frees
	// ceilingWait is how long the concurrency ceiling held the start past
	// at (its first turn's record says so).
	ceilingWait int64
}

func (r *runner) newSession(st start) *session {
	sess := new(session)
	r.initSession(sess, st)
	return sess
}

// initSession makes sess the session run st (a run that has ended may be
// made the next one: nothing holds a session once its run is over).
func (r *runner) initSession(sess *session, st start) {
	*sess = session{
		s:     st.s,
		turns: r.st.SessionLen(st.s),
		id:    r.st.SessionID(st.s),
		corr:  r.numberedID("-s", st.run),
		num:   st.run,
		slot:  r.ceiling > 0,
		wait:  st.ceilingWait,
	}
	if sess.turns > 1 {
		sess.hist = r.sessionHistory(st.s)
	}
}

// numberedID returns the run's ID, sep and n ("<run id>-<n>" for a
// request, "<run id>-s<n>" for a session run), built in one allocation.
func (r *runner) numberedID(sep string, n int64) string {
	var b [64]byte
	return string(strconv.AppendInt(append(append(b[:0], r.runID...), sep...), n, 10))
}

// sessionHistory decides how a multi-turn session's turns go out: nil
// sends every body as stored. --history on and off decide alone; auto
// follows the context mode the store records for the session (deltas:
// splice; a whole message array, or a verbatim payload: as stored), and
// for a session without one, looks at its second turn (history.parts).
func (r *runner) sessionHistory(s uint32) *history {
	switch r.o.History {
	case HistoryOff:
		return nil
	case HistoryOn:
		return &history{mode: HistoryOn}
	}
	i, ok := r.st.Lookup(s, 0)
	if !ok {
		return nil
	}
	f := r.st.Entry(i).Flags
	switch {
	case f&store.FlagContextDeltas != 0:
		return &history{mode: HistoryOn}
	case f&(store.FlagContextMessageArray|store.FlagVerbatim) != 0:
		return nil
	}
	return &history{mode: HistoryAuto}
}

// take claims one request from the budget. The lock orders it with stop,
// so that once stop returns no request starts (and inflight.Wait is safe).
func (r *runner) take() (seq int64, ok bool) {
	r.takeMu.Lock()
	defer r.takeMu.Unlock()
	if r.stopped.Load() {
		return 0, false
	}
	seq = r.issued.Add(1) - 1
	if seq >= r.limit {
		r.issued.Add(-1)
		return 0, false
	}
	r.inflight.Add(1)
	if seq == r.limit-1 {
		// The budget is spent: a dispatcher waiting for a start it drew
		// before this request was taken drops it now, not at its time.
		r.signal()
	}
	return seq, true
}

func (r *runner) stop() {
	r.stopOnce.Do(func() {
		r.takeMu.Lock()
		r.stopped.Store(true)
		r.takeMu.Unlock()
		close(r.stopCh)
		if w := r.waiter.Load(); w != nil {
			w.Interrupt()
		}
	})
}

func (r *runner) signal() {
	select {
	case r.wake <- struct{}{}:
		if w := r.waiter.Load(); w != nil {
			w.Interrupt()
		}
	default:
	}
}

func (r *runner) run(ctx context.Context) (*Stats, error) {
	// The counting tokenizer loads while the run waits and dials, and is
	// ready before the clock starts: loaded at the first answer, its
	// quarter second of CPU would land in the latencies of the requests
	// then in flight. Embeddings carry no text to count.
	tokReady := r.tok.preload(r.p.Endpoint != request.Embeddings)
	defer func() { <-tokReady }()
	r.sleepUntilStart(ctx)
	if ctx.Err() != nil {
		r.pool.close()
		return r.notStarted()
	}
	// Connections for the first sends, dialled before the clock starts; a
	// server that is not there fails the run now, not request by request.
	warm := 4
	if r.ceiling > 0 {
		warm = int(min(r.ceiling, 64))
	}
	warm = r.warmFor(min(warm, int(r.gen.n)))
	if err := r.pool.warm(ctx, warm); err != nil {
		r.pool.close()
		if ctx.Err() != nil {
			return r.notStarted()
		}
		return nil, fmt.Errorf("connecting to %s: %v", r.pool.dialer.Where(), netMessage(err))
	}
	r.awaitTokenizer(tokReady)
	r.clk = newClock()
	r.now = r.clk.now
	r.t0 = r.clk.now()
	if at := r.o.StartAt; !at.IsZero() {
		// The shared instant is the schedule's zero, even when this shard
		// got there late (up to MaxStartLag): its sends then show the lag
		// as lateness rather than shifting its schedule against the others'.
		if err := checkStartAt(at, r.clk.at(r.t0)); err != nil {
			r.pool.close()
			return nil, err
		}
		r.t0 = at.UnixNano()
	}
	r.sink = newSink(r.o.Results, r.o.Observe, r.runInfo())
	began := time.Now()
	cpu0 := cpuTime()

	interrupted := atomic.Bool{}
	ctxDone := make(chan struct{})
	watched := make(chan struct{}) // the watcher below has returned
	go func() {
		defer close(watched)
		stop := r.o.Stop
		for {
			select {
			case <-ctx.Done():
				interrupted.Store(true)
				r.stop()
				return
			case <-stop: // as Duration ends a run: not an interrupt
				r.stop()
				stop = nil
			case <-ctxDone:
				return
			}
		}
	}()
	if r.o.Duration > 0 {
		t := time.AfterFunc(time.Duration(r.t0-r.clk.now())+r.o.Duration, r.stop)
		defer t.Stop()
	}

	r.dispatch()

	// Sending is over: either everything ran, or a stop came. Requests in
	// flight get the grace period, then are cut.
	cut := r.stopped.Load()
	r.stop() // no request starts after this
	done := make(chan struct{})
	go func() { r.inflight.Wait(); close(done) }()
	// An interrupt that comes after the last send starts the grace period
	// too; Cut (a second interrupt) ends it at once.
	var grace *time.Timer
	var graceC <-chan time.Time
	startGrace := func() {
		if grace == nil {
			grace = time.NewTimer(r.o.Grace)
			graceC = grace.C
		}
	}
	if cut {
		startGrace()
	}
	interrupt := ctx.Done()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-interrupt:
			interrupt = nil
			startGrace()
			continue
		case <-graceC:
		case <-r.o.Cut:
		}
		// the grace period ran out, or a cut came: cut what is left
		r.abort()
		r.pool.abortAll(abortGrace)
		break
	}
	if grace != nil {
		grace.Stop()
	}
	<-done
	r.workers.Wait()
	close(ctxDone)
	<-watched // read the flag once it can no longer change: the end line and Stats agree
	wasInterrupted := interrupted.Load()
	r.pool.close()
	werr := r.sink.close(&result.End{RunID: r.runID, Interrupted: wasInterrupted})

	st := &Stats{
		RunID:          r.runID,
		Schedule:       r.mode,
		Sent:           r.issued.Load(),
		Results:        r.sink.n,
		Errors:         r.errors.Load(),
		Cancelled:      r.cancelled.Load(),
		Dials:          r.pool.dials.Load(),
		CeilingWaits:   r.ceilingWaits.Load(),
		CeilingMaxWait: time.Duration(r.ceilingMax.Load()),
		Answered:       r.sink.ok,
		Streamed:       r.sink.streamed,
		Interrupted:    wasInterrupted,
		Elapsed:        time.Since(began),
		CPU:            cpuTime() - cpu0,
	}
	if werr != nil {
		return st, fmt.Errorf("writing records: %w", werr)
	}
	return st, nil
}

// notStarted ends a run interrupted before its first send (waiting for
// --start-at, or dialling): its results are the end line alone, saying it
// was interrupted, so that its folder tells what happened.
func (r *runner) notStarted() (*Stats, error) {
	r.clk = newClock()
	r.now = r.clk.now
	r.t0 = r.clk.now()
	r.sink = newSink(r.o.Results, r.o.Observe, r.runInfo())
	st := &Stats{RunID: r.runID, Schedule: r.mode, Interrupted: true}
	if err := r.sink.close(&result.End{RunID: r.runID, Interrupted: true}); err != nil {
		return st, fmt.Errorf("writing records: %w", err)
	}
	return st, nil
}

// sleepUntilStart sleeps until shortly before Options.StartAt (startLead:
// the first connections are opened then, and are fresh when the schedule
// starts). An interrupt ends the sleep; the run then stops before sending.
func (r *runner) sleepUntilStart(ctx context.Context) {
	if r.o.StartAt.IsZero() {
		return
	}
	d := time.Until(r.o.StartAt) - startLead
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// runInfo describes the run for its results (result.RunInfo).
func (r *runner) runInfo() *result.RunInfo {
	p, st := r.p, r.st
	sum := st.Sum()
	tool := strings.Replace(r.o.UserAgent, "/", " ", 1)
	if tool == "" {
		tool = "aiperf-replay"
	}
	host, _ := os.Hostname()
	return &result.RunInfo{
		Host:      host,
		BootID:    bootID(),
		Clock:     clockState(),
		ID:        r.runID,
		Tool:      tool,
		StartNS:   r.t0,
		Store:     result.StoreInfo{Path: r.o.StoreName, SHA256: hex.EncodeToString(sum[:]), Records: int64(st.Len()), Sessions: int64(st.NumSessions())},
		URL:       redact.URL(r.o.URL), // a token in its query stays out of the results
		Path:      redact.URL(r.ep.path),
		Endpoint:  p.Endpoint,
		Model:     p.Model,
		Streaming: p.Streaming,
		Schedule:  p.Schedule,
		Shard:     r.o.Shard,
		Shards:    r.o.Shards,
		Offered:   p.Offered,
		Config:    r.o.Config,
	}
}

// dispatch runs the schedule: it starts session runs at their intended
// times and sends later turns whose delay has passed, waiting precisely
// for each, until nothing is left to start or sending stops.
func (r *runner) dispatch() {
	w := pace.NewWaiter(r.clk.now)
	defer w.Close()
	r.waiter.Store(w)
	if r.mode == ScheduleConcurrency {
		// A start instant ahead (StartAt): the first sessions start then.
		if r.t0 > r.clk.now() && !w.Until(r.t0, r.wake, r.stopCh) {
			return
		}
		for range r.o.Concurrency {
			st, ok := r.nextStart()
			if !ok {
				break
			}
			st.at = r.clk.now()
			if !r.o.StartAt.IsZero() {
				st.at = r.t0 // the shared instant: a late wake shows as lateness
			}
			r.startSession(st)
		}
	}
	var (
		pending   bool
		ps        start
		boundFrom int64 // when a due start first found no free slot
		// boundTill is when the ceiling last stopped binding: a start
		// intended before it queued behind the bound one, so the ceiling
		// delayed it too.
		boundTill int64
	)
	for !r.stopped.Load() {
		if pending && r.issued.Load() >= r.limit {
			// Drawn before the session started last took the budget's last
			// request: nothing is left for it to send.
			pending = false
			r.gen.exhausted.Store(true)
		}
		if !pending && r.mode != ScheduleConcurrency {
			ps, pending = r.nextStart()
		}
		pat := ps.at
		r.hmu.Lock()
		var top due
		haveTop := len(r.dues) > 0
		if haveTop {
			top = r.dues[0]
		}
		r.hmu.Unlock()

		startFirst := pending && (!haveTop || pat <= top.at)
		switch {
		case startFirst:
			if !w.Until(pat, r.wake, r.stopCh) {
				continue
			}
			if r.ceiling > 0 && r.free.Load() <= 0 {
				// The concurrency ceiling binds: serve later turns (which
				// may free a slot) until one frees.
				if boundFrom == 0 {
					boundFrom = r.clk.now()
				}
				if haveTop {
					if w.Until(top.at, r.wake, r.stopCh) {
						r.popDue()
					}
				} else {
					select {
					case <-r.wake:
					case <-r.stopCh:
					}
				}
				continue
			}
			if boundFrom != 0 || pat < boundTill {
				now := r.clk.now()
				r.ceilingWaits.Add(1)
				wait := now - pat // how late the ceiling made this start
				ps.ceilingWait = max(wait, 0)
				for {
					m := r.ceilingMax.Load()
					if wait <= m || r.ceilingMax.CompareAndSwap(m, wait) {
						break
					}
				}
				if boundFrom != 0 {
					boundTill = now
				}
				boundFrom = 0
			}
			pending = false
			r.startSession(ps)
			// Let the new session send now, on this processor, rather than
			// when the dispatcher next parks.
			runtime.Gosched()
		case haveTop:
			if w.Until(top.at, r.wake, r.stopCh) {
				r.popDue()
			}
		default:
			if r.gen.exhausted.Load() && r.active.Load() == 0 {
				return
			}
			select {
			case <-r.wake:
			case <-r.stopCh:
			}
		}
	}
}

// popDue sends the earliest later turn.
func (r *runner) popDue() {
	r.hmu.Lock()
	if len(r.dues) == 0 {
		r.hmu.Unlock()
		return
	}
	d := heap.Pop(&r.dues).(due)
	r.hmu.Unlock()
	r.workers.Add(1)
	go func() {
		defer r.workers.Done()
		r.drive(d.sess, d.at)
	}()
}

// startSession starts a session run in a new goroutine.
func (r *runner) startSession(st start) {
	r.active.Add(1)
	if r.ceiling > 0 {
		r.free.Add(-1)
	}
	sess := r.newSession(st)
	r.workers.Add(1)
	go func() {
		defer r.workers.Done()
		if testHookSessionStart != nil {
			testHookSessionStart()
		}
		r.drive(sess, st.at)
	}()
}

// testHookSessionStart, when a test sets it, runs as a session's goroutine
// begins (a slow start: the dispatcher draws the next start meanwhile).
var testHookSessionStart func()

// drive sends the turns of a session run from its next turn, until one
// must wait (it is then queued for the dispatcher) or the run ends. In
// the concurrency schedule the goroutine that ends a run starts the next.
func (r *runner) drive(sess *session, at int64) {
	for {
		if sess.turn < sess.turns && r.sendTurn(sess, at) {
			if sess.turn < sess.turns {
				next, ok := r.nextTurnAt(sess)
				if !ok {
					goto end
				}
				if next > r.clk.now() {
					r.hmu.Lock()
					heap.Push(&r.dues, due{at: next, sess: sess})
					r.hmu.Unlock()
					r.signal()
					return
				}
				at = next
				continue
			}
		}
	end:
		// The run is over.
		r.endSession(sess)
		if r.mode == ScheduleConcurrency {
			if st, ok := r.nextStart(); ok {
				r.initSession(sess, st)
				at = r.clk.now()
				continue
			}
		}
		if sess.slot {
			r.free.Add(1)
		}
		r.active.Add(-1)
		r.signal()
		return
	}
}

// nextTurnAt returns when the session's next turn is due: after the
// previous turn ended plus its delay, not before its own timestamp when it
// has one.
func (r *runner) nextTurnAt(sess *session) (int64, bool) {
	i, ok := r.st.Lookup(sess.s, uint32(sess.turn))
	if !ok {
		return 0, false
	}
	e := r.st.Entry(i)
	at := sess.prevEnd
	switch {
	case e.Flags&store.FlagDelay != 0:
		at += r.scale(e.TimeNS)
	case e.Flags&store.FlagTimestamp != 0 && r.mode == ScheduleFixed:
		// A later turn's timestamp is on the trace's clock: it goes no
		// earlier than that moment of the schedule.
		if t := r.t0 + r.scale(e.TimeNS-r.zero); t > at {
			at = t
		}
	}
	return at, true
}

// lazyTokenizer loads the counting tokenizer once, on first use or by
// preload before the run's clock starts.
type lazyTokenizer struct {
	load func() (*tokenizer.Tokenizer, error)
	once sync.Once
	t    *tokenizer.Tokenizer
}

// awaitTokenizer waits for the tokenizer's preload, but not past
// --start-at: a shard that started late by its load would be refused
// (MaxStartLag). The first answers then wait for the load to count.
func (r *runner) awaitTokenizer(ready <-chan struct{}) {
	if r.o.StartAt.IsZero() {
		<-ready
		return
	}
	t := time.NewTimer(time.Until(r.o.StartAt))
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
	}
}

// preload loads the tokenizer in the background when want is true and
// there is one to load; the channel it returns is closed when it is loaded
// (at once when there is nothing to load).
func (l *lazyTokenizer) preload(want bool) <-chan struct{} {
	done := make(chan struct{})
	if !want || l.load == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		l.get()
	}()
	return done
}

func (l *lazyTokenizer) get() *tokenizer.Tokenizer {
	if l.load == nil {
		return nil
	}
	l.once.Do(func() {
		if t, err := l.load(); err == nil {
			l.t = t
		}
	})
	return l.t
}
