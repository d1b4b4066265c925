package replaycmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/replay"
)

// describePlan says, in one line printed before the first send, what the
// run will do: the schedule (and why auto chose it), what bounds it, and
// how many requests go where.
func describePlan(p *replay.Plan) string {
	o := p.Options
	var b strings.Builder
	b.WriteString("schedule " + p.Schedule)
	if p.Auto {
		b.WriteString(" (auto: " + p.Why + ")")
	}
	var parts []string
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch p.Schedule {
	case replay.ScheduleFixed:
		if o.Speedup != 1 {
			parts = append(parts, "trace times ÷ "+g(o.Speedup))
		}
	case replay.ScheduleRate:
		parts = append(parts, fmt.Sprintf("%s session starts/s, %s arrivals", g(o.Rate), o.Arrival))
	case replay.ScheduleConcurrency:
		parts = append(parts, plural(o.Concurrency, "session")+" in flight")
	}
	if p.Schedule != replay.ScheduleConcurrency && o.Concurrency > 0 {
		parts = append(parts, fmt.Sprintf("--concurrency %d as a ceiling on sessions in flight (--schedule concurrency keeps %d in flight instead)", o.Concurrency, o.Concurrency))
	}
	switch n := p.Requests(); {
	case n < 0:
		parts = append(parts, "requests until --duration "+o.Duration.String())
	case o.Duration > 0:
		parts = append(parts, plural(int(n), "request")+" or --duration "+o.Duration.String())
	default:
		parts = append(parts, plural(int(n), "request"))
	}
	if o.Shards > 0 {
		parts = append(parts, fmt.Sprintf("shard %d/%d of the store's sessions", o.Shard, o.Shards))
		if p.Offered != "" {
			parts = append(parts, p.Offered)
		}
	}
	if !o.StartAt.IsZero() {
		parts = append(parts, "starting at "+o.StartAt.UTC().Format(time.RFC3339Nano))
	}
	for _, s := range parts {
		b.WriteString(", " + s)
	}
	b.WriteString(" to " + p.Path)
	return b.String()
}

// streamingMismatch says why the streaming metrics do not follow the
// store's metadata.
func streamingMismatch(store bool, s *replay.Stats) string {
	if store {
		return fmt.Sprintf("the store's bodies ask for streamed answers, but none of the %d answers was (text/event-stream): "+
			"the streaming metrics (TTFT, ITL, TTST, ICL) are left out", s.Answered)
	}
	return fmt.Sprintf("the store's metadata says its bodies are not streamed (streaming: false), but %d of the %d answers were server-sent events: "+
		"the streaming metrics (TTFT, ITL, TTST, ICL) are computed from them (repack the store to describe its bodies)", s.Streamed, s.Answered)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
