package replaycmd

import (
	"encoding/json"
	"io"

	"github.com/aiperf/toolkit/lib/prefix"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/aiperf/toolkit/lib/servermetrics"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

// kvCapacityFlag is --kv-capacity-blocks: the LRU simulation beside the
// trace's ideal prefix hit rate.
func kvCapacityFlag(dst *int) cli.Flag {
	return &cli.IntFlag{Name: "kv-capacity-blocks", Usage: "beside the trace's ideal prefix-cache hit rate, give the hit rate of an LRU cache of `N` of the trace's KV blocks (a store packed from hash_ids)", Destination: dst}
}

// prefixSummary is the "prefix_cache" member of profile_export_aiperf.json
// (prefix.Summary).
type prefixSummary struct{ *prefix.Summary }

// tracePrefix computes the prefix figures of the run recorded in files
// against store st (rundir.Prefix), or nil when the store has no hash_ids.
func tracePrefix(st *store.Reader, files []string, capacity int) (*prefixSummary, error) {
	s, err := rundir.Prefix(st, files, capacity)
	if s == nil || err != nil {
		return nil, err
	}
	return &prefixSummary{s}, nil
}

// measure sets the run's measured hit rates against the trace's: each
// scraped engine's (Δhits/Δqueries over the profiling window) and the
// answers' cached_tokens over their prompt tokens (hitRate, NaN when no
// answer reported it).
func (ps *prefixSummary) measure(rep *servermetrics.Report, hitRate float64) {
	if rep != nil {
		for _, t := range rep.Targets {
			if e := t.Engine; e != nil {
				ps.AddMeasured("server "+t.URL, e.HitRate)
			}
		}
	}
	ps.AddMeasured("answers' cached_tokens", hitRate)
}

// section is ps as a member of the summary file.
func (ps *prefixSummary) section() (json.RawMessage, error) {
	return json.Marshal(ps.Summary)
}

// writeBox draws the figures in a short rounded box.
func (ps *prefixSummary) writeBox(w io.Writer) { ps.WriteBox(w) }
