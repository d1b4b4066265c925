package metrics

import (
	"fmt"
	"io"

	"github.com/aiperf/toolkit/lib/result"
)

// Values reads src to its end and returns every profiling request's value
// of the per-request metrics tags name (Info.PerRequest), in their display
// units, in the order read: out[i] holds the values of tags[i]. A request
// without a value for a metric (a failed request; the TTFT of an answer
// that was not streamed) adds none. Warmup records are skipped. The values
// are the ones Summarize's statistics are computed from, so a percentile
// of them is the summary's.
func Values(src Source, o Options, tags ...string) ([][]float64, error) {
	ids := make([]id, len(tags))
	for k, tag := range tags {
		i, ok := byTag[tag]
		if !ok || !i.info().PerRequest {
			return nil, fmt.Errorf("metrics: %q is not a per-request metric", tag)
		}
		ids[k] = i
	}
	ev := evaluator{streaming: o.Streaming}
	out := make([][]float64, len(tags))
	var r result.Record
	var x values
	for {
		err := src.Next(&r)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		ev.note(&r)
		if r.Warmup() {
			continue
		}
		ev.eval(&r, &x)
		for k, i := range ids {
			if x.ok(i) {
				out[k] = append(out[k], x.v[i]*convFactor(defs[i].unit, defs[i].disp))
			}
		}
	}
}
