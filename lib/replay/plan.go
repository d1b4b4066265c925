package replay

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/store"
)

// Plan is a replay decided before any request goes out: the schedule
// resolved, every option checked against the store, the endpoint, the
// path and the request budget settled. NewPlan makes one and Run runs it;
// a command shows it to the user (aiperf-replay prints the schedule before
// the first send) from the same decisions the engine follows.
type Plan struct {
	// Options are the options as given, defaults filled in: Speedup and
	// Smoothness 1, History auto, Arrival poisson (gamma when only
	// Smoothness is given), Concurrency 1 for the concurrency schedule,
	// Schedule resolved. Run reads its outputs (Results, Observe,
	// Counters, Cut) from here: they may be set after NewPlan.
	Options Options
	Store   *store.Reader
	Meta    store.Meta // the store's metadata

	// Schedule is the schedule that runs: fixed, concurrency or rate.
	Schedule string
	// Auto reports that ScheduleAuto chose it, for the reason Why says.
	Auto bool
	Why  string

	// Endpoint is the endpoint type of the store's bodies (request.Chat or
	// request.Completions), "" when unknown. A store of verbatim bodies is
	// judged by its first body, which aiperf-pack checked the others
	// against (stores packed before it did may say chat for any body).
	Endpoint string
	// Path is the request path sent to: Options.Path, Options.Endpoint's
	// path, or the store's.
	Path string
	// Streaming reports that the store's bodies ask for streamed answers;
	// the records say what each answer was (result.Record.Streamed).
	Streaming bool
	Model     string // the model the store's bodies name ("" for none or several)

	// Limit is how many requests the run may send, warmup included
	// (math.MaxInt64: as many as Duration allows).
	Limit int64
	// TraceRequests is how many requests the fixed schedule's trace holds
	// within the offsets: it plays them once, so a Limit above it sends
	// only these. 0 for the other schedules.
	TraceRequests int64

	// Offered says what a shard of a sharded replay offers of the whole
	// replay's rate, concurrency and counts ("" when unsharded).
	Offered string
	// WholeShort says, for a shard of a fixed schedule, that the whole
	// replay's --request-count runs past the trace, which plays once (""
	// otherwise).
	WholeShort string

	ep endpoint
	// sessions are the shard's store sessions in store order (nil: every
	// session); shardRecords their records.
	sessions     []uint32
	shardRecords int64
	// wholeWarmup and wholeCount are the whole replay's --warmup and
	// --request-count of a sharded one that divides its figures (shard),
	// which the fixed schedule recounts (fixedShare).
	wholeWarmup, wholeCount int64
	// noneMeasured: this shard of a fixed schedule holds warmup requests
	// but none of the measured ones, so it sends its warmup only.
	noneMeasured bool
	order        []uint32 // fixed: sessions by first timestamp
	times        []int64  // fixed: intended offset of order[i] from the start, ns
	zero         int64    // fixed: the trace time that maps to the start
}

// OptionError is an option the plan refuses. Msg starts with the option's
// name in the spelling of aiperf-replay's flags ("concurrency",
// "start-offset"), so that a command can put its flag syntax in front; an
// error that is no one option's has Option "".
type OptionError struct {
	Option string
	Msg    string
}

func (e *OptionError) Error() string { return e.Msg }

func optErr(option, format string, args ...any) error {
	return &OptionError{Option: option, Msg: option + fmt.Sprintf(format, args...)}
}

// minRate is the lowest rate a plan takes: below one session start a day
// the run would wait days between starts (and the gaps of a rate near
// 1e-10 per second overflow the clock), which is a mistake of unit, not a
// benchmark.
const minRate = 1.0 / 86400

// NewPlan checks o against st and decides the replay. Every refusal is an
// error; an *OptionError names the option at fault.
func NewPlan(st *store.Reader, o Options) (*Plan, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if st.Len() == 0 {
		return nil, &OptionError{Msg: "the store has no records"}
	}
	p := &Plan{Store: st, Meta: st.Metadata()}
	p.describeStore()
	if err := p.settle(&o); err != nil {
		return nil, err
	}
	if err := checkStartAt(o.StartAt, time.Now()); err != nil {
		return nil, err
	}
	if err := p.shard(&o); err != nil {
		return nil, err
	}
	p.Options = o
	if err := p.resolveSchedule(); err != nil {
		return nil, err
	}
	if err := p.budget(); err != nil {
		return nil, err
	}
	return p, nil
}

// describeStore reads what the store's bodies are: the metadata, or for a
// store of verbatim bodies, its first body.
func (p *Plan) describeStore() {
	m := p.Meta
	p.Streaming, p.Model = m.Streaming, m.Model
	switch {
	case slices.Contains(request.Endpoints, m.Endpoint):
		p.Endpoint = m.Endpoint
	default: // early stores named the path here
		for _, e := range []string{request.Chat, request.Completions} {
			if m.Path == request.Path(e) || m.Endpoint == request.Path(e) {
				p.Endpoint = e
			}
		}
	}
	if p.Store.Entry(0).Flags&store.FlagVerbatim != 0 {
		c := request.Inspect(p.Store.Payload(0))
		if !request.Refines(p.Endpoint, c.Endpoint) {
			p.Endpoint = c.Endpoint
		}
		p.Streaming = c.Stream
		if c.HasModel && p.Model == "" {
			p.Model = c.Model
		}
	}
}

// settle checks the endpoint and the options that name no schedule, and
// fills in their defaults.
func (p *Plan) settle(o *Options) error {
	switch o.Endpoint {
	case "":
	case request.Chat, request.Completions, request.Embeddings, request.Responses, request.Messages, request.Raw, request.Template:
		if p.Endpoint != "" && o.Endpoint != p.Endpoint {
			return optErr("endpoint", " %s: the store holds %s bodies (for %s); the %s endpoint would refuse every one",
				o.Endpoint, p.Endpoint, request.Path(p.Endpoint), o.Endpoint)
		}
	default:
		return optErr("endpoint", " %q: want one of %s", o.Endpoint, strings.Join(request.Endpoints, ", "))
	}
	switch {
	case o.Path != "":
		p.Path = o.Path
	case o.Endpoint != "":
		p.Path = request.Path(o.Endpoint)
	case p.Store.Entry(0).Flags&store.FlagVerbatim != 0 && p.Endpoint != "":
		p.Path = request.Path(p.Endpoint)
	case p.Meta.Path != "":
		p.Path = p.Meta.Path
	case p.Endpoint != "":
		p.Path = request.Path(p.Endpoint)
	default:
		p.Path = request.Path(request.Chat)
	}
	if p.Path == "" { // a raw or template store names no path
		return optErr("path", " is required: the store holds %s bodies, which name no endpoint path", p.Endpoint)
	}
	ep, err := parseEndpoint(o.URL, p.Path, o.Insecure)
	if err != nil {
		return &OptionError{Msg: err.Error()}
	}
	p.ep = ep
	if o.Speedup == 0 {
		o.Speedup = 1
	}
	if o.History == "" {
		o.History = HistoryAuto
	}
	return nil
}

// resolveSchedule decides the schedule and refuses the options it has no
// use for: a user who gives them expects an effect, and would get none.
func (p *Plan) resolveSchedule() error {
	o := &p.Options
	p.Schedule = o.Schedule
	if p.Schedule == "" || p.Schedule == ScheduleAuto {
		p.Auto = true
		switch {
		case o.Rate > 0:
			p.Schedule, p.Why = ScheduleRate, "a rate is given"
		case p.Store.HasTimestamps():
			p.Schedule, p.Why = ScheduleFixed, "the store has timestamps"
		default:
			p.Schedule, p.Why = ScheduleConcurrency, "the store has no timestamps"
		}
	}
	o.Schedule = p.Schedule
	for _, u := range []struct {
		option, schedule, what string
		set                    bool
	}{{"start-offset", ScheduleFixed, "plays trace times", o.StartOffset != nil}, {"end-offset", ScheduleFixed, "plays trace times", o.EndOffset != nil},
		{"arrival", ScheduleRate, "has arrivals", o.Arrival != ""}, {"smoothness", ScheduleRate, "has arrivals", o.Smoothness != 0}} {
		if u.set && p.Schedule != u.schedule {
			return optErr(u.option, ": only the %s schedule %s (this run's schedule is %s)", u.schedule, u.what, p.Schedule)
		}
	}
	switch p.Schedule {
	case ScheduleFixed:
		if !p.Store.HasTimestamps() {
			return optErr("schedule", " fixed: the store has no timestamps")
		}
		if o.Rate > 0 {
			return optErr("rate", ": only the rate schedule has a rate (this run's schedule is fixed)")
		}
		return p.fixedOrder()
	case ScheduleRate:
		if o.Rate == 0 {
			return optErr("schedule", " rate: needs a rate")
		}
		if o.Rate < minRate {
			return optErr("rate", " %g: fewer than one session start a day (a mean gap of %s): the run would wait that long between starts",
				o.Rate, meanGap(o.Rate))
		}
		switch {
		case o.Arrival != "":
		case o.Smoothness != 0:
			o.Arrival = ArrivalGamma // as in aiperf: the smoothness alone selects gamma
		default:
			o.Arrival = ArrivalPoisson
		}
		if o.Smoothness == 0 {
			o.Smoothness = 1
		}
	case ScheduleConcurrency:
		if o.Rate > 0 {
			return optErr("rate", ": only the rate schedule has a rate (this run's schedule is concurrency)")
		}
		if o.Concurrency == 0 {
			o.Concurrency = 1
		}
	}
	return nil
}

// meanGap says 1/rate seconds in a readable unit.
func meanGap(rate float64) string {
	s := 1 / rate
	switch {
	case s >= 365*86400:
		return strconv.FormatFloat(s/(365*86400), 'g', 3, 64) + " years"
	case s >= 86400:
		return strconv.FormatFloat(s/86400, 'g', 3, 64) + " days"
	}
	return strconv.FormatFloat(s, 'g', 3, 64) + " s"
}

// sessionStart is a session and the trace time of its first turn.
type sessionStart struct {
	s  uint32
	ts int64
}

// fixedOrder sorts the sessions by the timestamp of their first turn and
// applies the offsets.
func (p *Plan) fixedOrder() error {
	st, o := p.Store, &p.Options
	ns := st.NumSessions()
	firsts := make([]sessionStart, 0, ns)
	for s := range ns {
		i, ok := st.Lookup(uint32(s), 0)
		if !ok {
			continue
		}
		e := st.Entry(i)
		if e.Flags&store.FlagTimestamp == 0 {
			if p.Why != "" { // auto chose it: say so, and what else to give
				return optErr("schedule", " auto chose fixed (some of the store's records have timestamps), which needs every session's first turn to have one, and session %q (record %d) has none: give --schedule concurrency or rate", st.SessionID(uint32(s)), i)
			}
			return optErr("schedule", " fixed: needs timestamps, and session %q (record %d) has none", st.SessionID(uint32(s)), i)
		}
		if o.StartOffset != nil && e.TimeNS < int64(*o.StartOffset) || o.EndOffset != nil && e.TimeNS > int64(*o.EndOffset) {
			continue
		}
		firsts = append(firsts, sessionStart{uint32(s), e.TimeNS})
	}
	if len(firsts) == 0 {
		opt := "start-offset"
		if o.StartOffset == nil {
			opt = "end-offset"
		}
		return optErr(opt, ": no session starts within the offsets")
	}
	if !slices.IsSortedFunc(firsts, func(a, b sessionStart) int { return cmpInt(a.ts, b.ts) }) {
		slices.SortStableFunc(firsts, func(a, b sessionStart) int { return cmpInt(a.ts, b.ts) })
	}
	p.zero = firsts[0].ts
	if o.StartOffset != nil {
		p.zero = int64(*o.StartOffset)
	}
	if o.Shards > 0 {
		// every shard refuses offsets that leave some shard nothing, so
		// that none sends its part of a replay that cannot merge
		held := make([]int64, o.Shards) // each shard's requests
		for _, f := range firsts {
			held[int(f.s)%o.Shards] += int64(st.SessionLen(f.s))
		}
		least := slices.Index(held, slices.Min(held))
		if held[least] == 0 {
			return optErr("shard", " %d/%d: none of shard %d/%d's sessions starts within the offsets (use fewer shards or wider offsets)", o.Shard, o.Shards, least, o.Shards)
		}
		if o.PerShard && o.Warmup > 0 && o.Warmup >= held[least] {
			return optErr("warmup", " %d (each shard's, --per-shard) takes all %d requests of shard %d/%d in the fixed schedule (it plays the trace once): it would measure nothing", o.Warmup, held[least], least, o.Shards)
		}
		if err := p.fixedShare(firsts); err != nil {
			return err
		}
		// Every shard plays the trace on one clock: the zero is the whole
		// trace's, so a shard whose first session starts later waits for it.
		firsts = slices.DeleteFunc(firsts, func(f sessionStart) bool { return !p.inShard(f.s) })
	}
	p.order = make([]uint32, len(firsts))
	p.times = make([]int64, len(firsts))
	for i, f := range firsts {
		p.order[i] = f.s
		p.times[i] = p.scale(f.ts - p.zero)
		p.TraceRequests += int64(st.SessionLen(f.s))
	}
	if o.Warmup > 0 && o.Warmup >= p.TraceRequests && p.wholeWarmup == 0 {
		// The trace plays once: a warmup that takes every request of it
		// leaves nothing to measure.
		return optErr("warmup", " %d takes all %d requests of the fixed schedule (it plays the trace once): none would be measured", o.Warmup, p.TraceRequests)
	}
	return nil
}

// scale divides a trace duration by the speedup, saturating rather than
// overflowing the clock.
func (p *Plan) scale(d int64) int64 {
	if p.Options.Speedup == 1 {
		return d
	}
	return satInt(float64(d) / p.Options.Speedup)
}

// satInt rounds x to an int64, saturating at the int64 range (a float
// conversion out of range is undefined).
func satInt(x float64) int64 {
	switch {
	case x >= math.MaxInt64/2:
		return math.MaxInt64 / 2
	case x <= math.MinInt64/2:
		return math.MinInt64 / 2
	}
	return int64(math.Round(x))
}

// budget settles how many requests may go.
func (p *Plan) budget() error {
	o := p.Options
	switch {
	case p.noneMeasured:
		p.Limit = o.Warmup
	case o.RequestCount > 0:
		p.Limit = o.Warmup + o.RequestCount
		if p.Limit < o.RequestCount { // past MaxInt64: no limit but the others
			p.Limit = math.MaxInt64
		}
	case o.Duration > 0:
		p.Limit = math.MaxInt64
	default:
		p.Limit = o.Warmup + p.records()
		if p.Limit < o.Warmup {
			p.Limit = math.MaxInt64
		}
	}
	return nil
}

// records is how many records the plan's sessions hold: the store's, or
// the shard's.
func (p *Plan) records() int64 {
	if p.sessions != nil {
		return p.shardRecords
	}
	return int64(p.Store.Len())
}

// Requests is how many requests the run will send at most: the budget, or
// for the fixed schedule the trace, whichever is smaller; -1 when only
// Duration bounds it.
func (p *Plan) Requests() int64 {
	n := p.Limit
	if p.Schedule == ScheduleFixed {
		n = min(n, p.TraceRequests)
	}
	if n == math.MaxInt64 {
		return -1
	}
	return n
}
