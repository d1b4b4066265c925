package replaycmd

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
)

// connOptions are the flags of how requests use their connections and
// what the console shows of it.
type connOptions struct {
	sessionHeader   string
	connectionReuse string
	showTraceTiming bool
}

// connFlags returns the flags --session-header, --connection-reuse and
// --show-trace-timing.
func connFlags(o *connOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "session-header", Value: replay.DefaultSessionHeader, Usage: "send each session run's id in header `NAME` on every turn, for routers that pin a session to a replica (\"\": none)", Destination: &o.sessionHeader},
		&cli.StringFlag{Name: "connection-reuse", Value: replay.ReusePooled, Usage: "`MODE`: pooled (any idle keep-alive connection), never (a new connection per request) or sticky (a session's turns on one connection, closed after its last)", Destination: &o.connectionReuse},
		showTraceTimingFlag(&o.showTraceTiming),
	}
}

// sweepConnFlags returns the flags --session-header and
// --connection-reuse of sweep: its steps use connections as a replay does
// (the console shows the sweep's table, not a step's).
func sweepConnFlags(o *connOptions) []cli.Flag { return connFlags(o)[:2] }

// sweepSettings adds the settings that differ from their defaults to a
// sweep's settings (they change what a step measures; a default is left
// out, so that the sweep.json of a sweep from before the flags resumes).
func (o *connOptions) sweepSettings(m map[string]string) {
	if o.connectionReuse != replay.ReusePooled {
		m["connection_reuse"] = o.connectionReuse
	}
	if o.sessionHeader != replay.DefaultSessionHeader {
		m["session_header"] = o.sessionHeader
	}
}

func showTraceTimingFlag(dst *bool) cli.Flag {
	return &cli.BoolFlag{Name: "show-trace-timing", Usage: "print the http_req_* metrics (aiperf's: blocked, dns, connecting, sending, waiting, receiving, ...) and ours (TLS, http_wire_*: the connection's view) as a console table of their own; the exports always hold them", Destination: dst}
}

// apply sets the replay options of the flags.
func (o *connOptions) apply(ro *replay.Options) {
	ro.ConnectionReuse = o.connectionReuse
	if o.connectionReuse == "sticky-user-sessions" { // aiperf's name
		ro.ConnectionReuse = replay.ReuseSticky
	}
	ro.SessionHeader = o.sessionHeader
	ro.NoSessionHeader = o.sessionHeader == ""
}

// config adds the settings to the run's input config.
func (o *connOptions) config(cfg map[string]any) {
	cfg["connection_reuse"] = o.connectionReuse
	cfg["session_header"] = o.sessionHeader
}

// aiperfReuseStrategy is --connection-reuse as aiperf's EndpointConfig
// names it (connection_reuse_strategy: pooled, never, sticky-user-sessions;
// src/aiperf/common/config/endpoint_config.py), "" for pooled, the default
// (aiperf dumps only what was set) or a mode aiperf lacks. The session
// header has no place there: aiperf always sends X-Correlation-ID, so
// --session-header stays in aiperf_replay's settings alone.
func aiperfReuseStrategy(mode string) string {
	switch mode {
	case replay.ReuseNever:
		return "never"
	case replay.ReuseSticky, "sticky-user-sessions":
		return "sticky-user-sessions"
	}
	return ""
}

// writeTraceTiming prints the trace timing table when asked.
func writeTraceTiming(w io.Writer, show bool, s *metrics.Summary) error {
	if !show {
		return nil
	}
	return metrics.WriteTraceTiming(w, s)
}
