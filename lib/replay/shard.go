package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/store"
)

// MaxStartLag is how far in the past Options.StartAt may be when a run
// starts: later than that, the shard would not start with the others (its
// schedule would be shifted against theirs by the lag), so it is refused.
const MaxStartLag = time.Second

// startLead is how long before StartAt a run stops sleeping and opens its
// first connections, so that they are open when the schedule starts (and a
// keep-alive connection opened minutes before would be stale).
const startLead = 500 * time.Millisecond

// ParseStartAt parses a start instant: RFC 3339 with optional fractional
// seconds ("2026-12-02T10:00:00.5Z", "2026-12-02T11:00:00+01:00"), or
// "+DURATION" after now ("+30s", "+2m").
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	if d, ok := strings.CutPrefix(s, "+"); ok {
		dur, err := time.ParseDuration(d)
		if err != nil || dur < 0 {
			return time.Time{}, fmt.Errorf("%q: want +DURATION (+30s, +2m) or an RFC 3339 time", s)
		}
		return now.Add(dur), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time (2026-12-02T10:00:00.000Z) or +DURATION", s)
	}
	return t, nil
}

// checkShard judges the sharding options.
func (o *Options) checkShard() error {
	switch {
	case o.Shards < 0 || o.Shard < 0 || o.Shards > 0 && o.Shard >= o.Shards || o.Shards == 0 && o.Shard != 0:
		return optErr("shard", " %d/%d: want i/N with 0 <= i < N", o.Shard, o.Shards)
	case o.PerShard && o.Shards == 0:
		return optErr("per-shard", ": only a sharded run (--shard i/N) divides its rate and concurrency")
	}
	return nil
}

// lagWords says how far t is behind now, in words.
func lagWords(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%.1f hours", d.Hours())
	case d >= time.Minute:
		return fmt.Sprintf("%.1f minutes", d.Minutes())
	}
	return fmt.Sprintf("%.3g s", d.Seconds())
}

// checkStartAt refuses a start instant already past by more than
// MaxStartLag at now.
func checkStartAt(at, now time.Time) error {
	if at.IsZero() {
		return nil
	}
	if lag := now.Sub(at); lag > MaxStartLag {
		return optErr("start-at", " %s was %s ago: this shard would start %s after the others (give every shard an instant ahead, e.g. +30s when they are launched together)",
			at.UTC().Format(time.RFC3339Nano), lagWords(lag), lagWords(lag))
	}
	return nil
}

// share is shard k's part of a whole count n split over shards: the
// floor, plus one for the first n mod shards shards, so the parts add up
// to n.
func share(n int64, k, shards int) int64 {
	q, r := n/int64(shards), n%int64(shards)
	if int64(k) < r {
		q++
	}
	return q
}

// noneFrom says that shards from..shards-1 get none ("shard 3 has none",
// "shards 3 to 5 have none").
func noneFrom(from, shards int) string {
	if from == shards-1 {
		return fmt.Sprintf("shard %d has none", from)
	}
	return fmt.Sprintf("shards %d to %d have none", from, shards-1)
}

// shard selects the plan's sessions and gives this shard its share of the
// whole replay's figures. Offered says, for the summary, what this shard
// offers of what the whole replay does.
func (p *Plan) shard(o *Options) error {
	if o.Shards == 0 {
		return nil
	}
	st := p.Store
	ns := st.NumSessions()
	// Every shard checks every shard's part, not only its own, so that the
	// N shards of a replay all refuse it before sending, or none does: one
	// that refused alone left the others to send their parts of a replay
	// whose merge is then refused for the missing shard.
	if o.Shards > ns {
		return optErr("shard", " %d/%d: the store has %d sessions, so %s (use at most %d shards)", o.Shard, o.Shards, ns, noneFrom(ns, o.Shards), ns)
	}
	p.sessions = make([]uint32, 0, (ns-o.Shard+o.Shards-1)/o.Shards)
	for s := o.Shard; s < ns; s += o.Shards {
		p.sessions = append(p.sessions, uint32(s))
		p.shardRecords += int64(st.SessionLen(uint32(s)))
	}
	if o.PerShard {
		p.Offered = "--per-shard: the figures given are this shard's"
		return nil
	}
	var parts []string
	if o.Rate > 0 {
		whole := o.Rate
		o.Rate /= float64(o.Shards)
		parts = append(parts, fmt.Sprintf("rate %s of %s sessions/s", strconv.FormatFloat(o.Rate, 'g', 6, 64), strconv.FormatFloat(whole, 'g', 6, 64)))
	}
	if o.Concurrency > 0 {
		c := share(int64(o.Concurrency), o.Shard, o.Shards)
		if o.Concurrency < o.Shards {
			return optErr("concurrency", " %d over %d shards: %s (give at least one session per shard, or --per-shard)", o.Concurrency, o.Shards, noneFrom(o.Concurrency, o.Shards))
		}
		parts = append(parts, fmt.Sprintf("concurrency %d of %d", c, o.Concurrency))
		o.Concurrency = int(c)
	}
	if o.RequestCount > 0 {
		p.wholeCount = o.RequestCount
		c := share(o.RequestCount, o.Shard, o.Shards)
		// The fixed schedule (which auto picks without a rate on a timed
		// store) recounts in fixedShare.
		fixed := o.Schedule == ScheduleFixed || (o.Schedule == "" || o.Schedule == ScheduleAuto) && o.Rate == 0 && st.HasTimestamps()
		if o.RequestCount < int64(o.Shards) && !fixed {
			return optErr("request-count", " %d over %d shards: %s", o.RequestCount, o.Shards, noneFrom(int(o.RequestCount), o.Shards))
		}
		parts = append(parts, fmt.Sprintf("request count %d of %d", c, o.RequestCount))
		o.RequestCount = c
	}
	if o.Warmup > 0 {
		p.wholeWarmup = o.Warmup
		c := share(o.Warmup, o.Shard, o.Shards)
		parts = append(parts, fmt.Sprintf("warmup %d of %d", c, o.Warmup))
		o.Warmup = c
	}
	if len(parts) > 0 {
		p.Offered = strings.Join(parts, ", ") + " (the whole replay's figures divided over its shards)"
	}
	return nil
}

// inShard reports whether store session s belongs to the plan's shard.
func (p *Plan) inShard(s uint32) bool {
	o := p.Options
	return o.Shards == 0 || int(s)%o.Shards == o.Shard
}

// fixedShare recounts a sharded fixed schedule's warmup and request count
// as the unsharded run counts them: the whole trace's first W requests in
// send order are the warmup and the next N the measured ones, and a
// shard's part of each is how many of them are its own, not an even share
// from its own start. The send order is the one the schedule means
// (intendedOrder); each shard sends its own requests in that order, so
// its part is its first. A shard holding warmup but none of the measured
// requests sends its warmup only (noneMeasured); one holding neither is
// refused.
func (p *Plan) fixedShare(firsts []sessionStart) error {
	o := &p.Options
	if p.wholeWarmup == 0 && p.wholeCount == 0 {
		return nil
	}
	order, exact := p.intendedOrder(firsts)
	whole := int64(len(order))
	if p.wholeWarmup >= whole {
		return optErr("warmup", " %d takes all %d requests of the fixed schedule (it plays the trace once): none would be measured", p.wholeWarmup, whole)
	}
	// of counts shard k's requests among the trace's [from, to); mine,
	// this shard's.
	of := func(k int, from, to int64) int64 {
		var n int64
		for _, sh := range order[from:to] {
			if int(sh) == k {
				n++
			}
		}
		return n
	}
	mine := func(from, to int64) int64 { return of(o.Shard, from, to) }
	ours := mine(0, whole)
	if err := p.everyShardSends(of, whole); err != nil {
		return err
	}
	how := ""
	if !exact {
		how = "; the trace's later turns wait for answers, so the order is the trace's times without their latency"
	}
	w := mine(0, min(p.wholeWarmup, whole))
	if p.wholeWarmup > 0 {
		all := ""
		if w >= ours {
			all = "; every request of this shard is warmup: it measures nothing, the other shards do"
		}
		p.Offered = strings.Replace(p.Offered, fmt.Sprintf("warmup %d of %d", o.Warmup, p.wholeWarmup),
			fmt.Sprintf("warmup %d of %d (the trace's first %d requests, this shard's among them%s%s)", w, p.wholeWarmup, p.wholeWarmup, all, how), 1)
		o.Warmup = w
	}
	if p.wholeCount > 0 {
		from := p.wholeWarmup
		to := min(from+p.wholeCount, whole)
		if to < from { // past MaxInt64
			to = whole
		}
		c := mine(from, to)
		note := ""
		if to-from < p.wholeCount {
			p.WholeShort = fmt.Sprintf("--request-count %d: the fixed schedule plays the trace once, and it holds %d requests (--warmup %d included): the shards send %d, not %d",
				p.wholeCount, whole, p.wholeWarmup, to, satAdd(p.wholeWarmup, p.wholeCount))
			note = fmt.Sprintf("; the trace holds %d after the warmup", to-from)
		}
		if c == 0 { // with warmup: everyShardSends refused a shard with neither
			p.noneMeasured = true
			note = "; it sends its warmup only: it measures nothing, the other shards do"
		}
		p.Offered = strings.Replace(p.Offered, fmt.Sprintf("request count %d of %d", o.RequestCount, p.wholeCount),
			fmt.Sprintf("request count %d of %d (the trace's requests %d to %d, this shard's among them%s%s)", c, p.wholeCount, from+1, to, note, how), 1)
		o.RequestCount = c
	}
	return nil
}

// everyShardSends refuses, in every shard alike, a fixed schedule's
// warmup and request count that leave some shard nothing to send: one
// that refused alone left the others to send their parts of a replay whose
// merge is then refused for the missing shard. of counts shard k's
// requests among the trace's [from, to) in send order.
func (p *Plan) everyShardSends(of func(k int, from, to int64) int64, whole int64) error {
	o := &p.Options
	w := min(p.wholeWarmup, whole)
	from, to := p.wholeWarmup, whole
	if p.wholeCount > 0 {
		to = min(satAdd(from, p.wholeCount), whole)
	}
	for k := range o.Shards {
		if of(k, 0, w) == 0 && of(k, from, to) == 0 {
			return optErr("request-count", " %d: the trace's requests %d to %d (after a warmup of %d) hold none of shard %d/%d's sessions, and its warmup none either: it would send nothing (use fewer shards or a larger count)",
				p.wholeCount, from+1, to, p.wholeWarmup, k, o.Shards)
		}
	}
	return nil
}

// intendedOrder lists the trace's requests (the sessions of firsts, all
// their turns) in the order the fixed schedule means to send them, true
// for this shard's: by trace time, a session's later turn at its own
// timestamp (no earlier than the turn before it) or at the turn before it
// plus its delay. Ties keep the sessions' start order and the turns' own
// (the list is built in that order and sorted stably).
// The run sends a later turn once the answer before it is in, so the order
// is exact when every session has one turn or every later turn's
// timestamp comes after the answer before it; exact is false when a later
// turn waits for an answer by the trace's own rule (a delay, or no time).
func (p *Plan) intendedOrder(firsts []sessionStart) (order []int32, exact bool) {
	st := p.Store
	type req struct {
		t     int64
		shard int32
	}
	var reqs []req
	exact = true
	for _, f := range firsts {
		sh := int32(int(f.s) % p.Options.Shards)
		t := f.ts
		for turn := range st.SessionLen(f.s) {
			if turn > 0 {
				i, _ := st.Lookup(f.s, uint32(turn))
				switch e := st.Entry(i); {
				case e.Flags&store.FlagTimestamp != 0:
					t = max(t, e.TimeNS)
				case e.Flags&store.FlagDelay != 0:
					t += e.TimeNS
					exact = false
				default:
					exact = false
				}
			}
			reqs = append(reqs, req{t, sh})
		}
	}
	slices.SortStableFunc(reqs, func(a, b req) int { return cmpInt(a.t, b.t) })
	order = make([]int32, len(reqs))
	for i, r := range reqs {
		order[i] = r.shard
	}
	return order, exact
}
