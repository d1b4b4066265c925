package replaycmd

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/result"
)

// reportMade is what a report's exports were made with in place of the
// run's settings: the SLOs applied (its --goodput, or the run's) and its
// --slice-duration (0: the run's), and for a merge its folder. The rest
// stays the run's: the exports describe the run.
type reportMade struct {
	goodput string
	slice   time.Duration
	// cancelled: a run merged was interrupted (its end line says so), and
	// the exports say was_cancelled as the run's own did.
	cancelled bool
	// merged: the exports are several runs' (shards), written to out (-o):
	// their artifact folder is out, and no one shard's index describes them.
	merged bool
	out    string
	// profiled: the requests the summary counts (aiperfInputConfig).
	profiled int64
	steady   []metrics.Section // --steady-state's section (steady.go)
}

// aiperfInputConfig writes a run's settings (its records' run info) as
// aiperf's UserConfig, with what a report made its exports with (made; nil
// for the run's own). id is the exports' benchmark_id (the run's, or a
// merge's); profiled, the requests the exports count (their request_count
// and error_request_count), which a run that set no count of its own
// writes as loadgen.request_count: aiperf would read it as its default of
// 10. The same run info and records give the same bytes, so `report` over
// a run's records, with the run's SLOs, writes the input_config the run
// wrote.
func aiperfInputConfig(ri *result.RunInfo, made *reportMade, id string, profiled int64) json.RawMessage {
	var c flatConfig
	if len(ri.Config) > 0 {
		json.Unmarshal(ri.Config, &c) // a member of another type reads as zero
	}
	var slice time.Duration
	if made != nil {
		c.Goodput, slice = made.goodput, made.slice
	}
	u := aiperfUserConfig{Endpoint: endpointOf(ri, &c), BenchmarkID: id, Replay: replayOf(ri, made)}
	u.Loadgen = aiperfLoadgenOf(ri.Schedule, &c)
	if u.Loadgen.RequestCount == 0 && u.Loadgen.BenchmarkDuration == 0 && profiled > 0 {
		u.Loadgen.RequestCount = profiled
	}
	in := aiperfInput{RandomSeed: c.Seed, Goodput: goodputString(c.Goodput)}
	if ri.Schedule == replay.ScheduleFixed && ri.Store.Path != "" {
		// aiperf's fixed schedule needs its file, which must exist where
		// the export is read (as aiperf's own exports name theirs)
		in.File, in.FixedSchedule = ri.Store.Path, true
	}
	if in != (aiperfInput{}) {
		u.Input = &in
	}
	if out := outputOf(&c, made, slice); out != (aiperfOutput{}) {
		u.Output = &out
	}
	b, err := json.Marshal(u)
	if err != nil { // only finite numbers and strings: cannot happen
		return nil
	}
	return b
}

// endpointOf is the endpoint section. An endpoint aiperf's EndpointType
// lacks (responses, messages and raw bodies are not in aiperf 0.6.0's
// enum) is its "template" endpoint, the one for bodies of any shape, at
// the path the run sent to; aiperf_replay.endpoint keeps ours.
func endpointOf(ri *result.RunInfo, c *flatConfig) aiperfEndpoint {
	e := aiperfEndpoint{
		ModelNames: []string{}, Type: ri.Endpoint, Streaming: ri.Streaming, URL: ri.URL,
		TimeoutSeconds: seconds(c.Timeout), ReuseStrategy: aiperfReuseStrategy(c.Reuse),
	}
	if ri.Model != "" {
		e.ModelNames = []string{ri.Model}
	}
	if ri.URL != "" {
		e.URLs = []string{ri.URL}
	}
	if ri.Path != "" && ri.Path != request.Path(ri.Endpoint) {
		e.CustomEndpoint = ri.Path
	}
	if aiperfEndpointType(ri.Endpoint) != ri.Endpoint {
		e.Type, e.CustomEndpoint = aiperfEndpointType(ri.Endpoint), ri.Path
	}
	return e
}

// aiperfEndpointType is endpoint as aiperf's EndpointType names it.
func aiperfEndpointType(endpoint string) string {
	switch endpoint {
	case request.Responses, request.Messages, request.Raw:
		return request.Template
	}
	return endpoint
}

// replayOf is the aiperf_replay section: the run's own, with no one
// shard's index for a merge of shards (made.merged).
func replayOf(ri *result.RunInfo, made *reportMade) replayInfo {
	r := replayInfo{Tool: ri.Tool, Store: storeInfo(ri.Store), Schedule: ri.Schedule, Offered: ri.Offered, Settings: ri.Config}
	if aiperfEndpointType(ri.Endpoint) != ri.Endpoint {
		r.Endpoint = ri.Endpoint
	}
	if ri.Shards > 0 {
		r.Shards = ri.Shards
		if made == nil || !made.merged {
			shard := ri.Shard
			r.Shard = &shard
		}
	}
	return r
}

// outputOf is the output section: the run's artifact folder (a merge's:
// the report's) and slice duration (a report's own when it set one).
func outputOf(c *flatConfig, made *reportMade, slice time.Duration) aiperfOutput {
	out := aiperfOutput{ArtifactDirectory: c.Output, SliceDuration: seconds(c.SliceDuration)}
	if made != nil && made.merged && made.out != "" {
		out.ArtifactDirectory = made.out
	}
	if slice > 0 {
		out.SliceDuration = slice.Seconds()
	}
	return out
}

// aiperfLoadgenOf is the loadgen section of the run's settings c under
// schedule: aiperf's names for what drove the load.
func aiperfLoadgenOf(schedule string, c *flatConfig) aiperfLoadgen {
	var lg aiperfLoadgen
	switch schedule {
	case replay.ScheduleConcurrency:
		lg.Concurrency = max(c.Concurrency, 1) // the library's default, as aiperf's
		lg.ArrivalPattern = "concurrency_burst"
	case replay.ScheduleRate:
		lg.RequestRate = positive(c.Rate)
		lg.Concurrency = max(c.Concurrency, 0) // a ceiling, as aiperf's with a rate
		switch c.Arrival {
		case replay.ArrivalPoisson, replay.ArrivalConstant, replay.ArrivalGamma:
			lg.ArrivalPattern = c.Arrival
		}
		if lg.ArrivalPattern == replay.ArrivalGamma {
			lg.ArrivalSmoothness = positive(c.Smoothness)
		}
	default: // fixed: the trace's times; --concurrency is a ceiling
		lg.Concurrency = max(c.Concurrency, 0)
	}
	lg.RequestCount = max(c.RequestCount, 0)
	lg.WarmupRequestCount = max(c.Warmup, 0)
	if d := seconds(c.Duration); d > 0 {
		lg.BenchmarkDuration = d
		if g, err := parseMS(c.Grace); c.Grace != "" && err == nil && g >= 0 {
			gs := g.Seconds()
			lg.BenchmarkGracePeriod = &gs
		}
	}
	if r := c.CancelRate; r > 0 && r <= 100 {
		lg.RequestCancellationRate = r
		if d, err := parseMS(c.CancelAfter); c.CancelAfter != "" && err == nil && d >= 0 {
			ds := d.Seconds()
			lg.RequestCancellationDelay = &ds
		}
	}
	return lg
}

// seconds reads a duration setting as seconds (0 when unset or not a
// positive duration).
func seconds(s string) float64 {
	if s == "" {
		return 0
	}
	d, err := parseMS(s)
	if err != nil || d <= 0 {
		return 0
	}
	return d.Seconds()
}

func positive(v float64) float64 {
	if v > 0 && !math.IsInf(v, 0) {
		return v
	}
	return 0
}

// goodputString is --goodput ("METRIC:VALUE ...") as aiperf's
// input.goodput, the string its parser reads (it refuses the dict it
// dumps); "" when empty or malformed (the run refused a malformed one
// before sending).
func goodputString(s string) string {
	fields := strings.Fields(s)
	for _, f := range fields {
		k, v, ok := strings.Cut(f, ":")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || k == "" || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
	}
	return strings.Join(fields, " ")
}

// runConfig is a finished run's input_config and run_info: from the run
// info its records carry, as `report` reads it, or, when no record was
// written, from the plan.
func runConfig(recPath string, p *replay.Plan, st *replay.Stats, profiled int64) (inputConfig, runInfo json.RawMessage) {
	ri := readRuns([]string{recPath})[0]
	if ri == nil {
		ri = &result.RunInfo{
			ID: st.RunID, URL: p.Options.URL, Path: p.Path, Endpoint: p.Endpoint, Model: p.Model,
			Streaming: p.Streaming, Schedule: p.Schedule, Offered: p.Offered, Config: p.Options.Config,
		}
	}
	return aiperfInputConfig(ri, nil, st.RunID, profiled), aiperfRunInfo(ri, st.RunID)
}

// aiperfRunInfo is the exports' "run_info": the Python aiperf's newer
// per-run block (RunInfo in src/aiperf/common/models/export_models.py of
// JsonExportData schema 1.3, written by metrics_json_exporter.py at
// ai-dynamo/aiperf 047d59dd as RunInfo.from_run): the run's id and the
// seed it used. An older aiperf keeps it as an extra member.
func aiperfRunInfo(ri *result.RunInfo, id string) json.RawMessage {
	var c flatConfig
	if len(ri.Config) > 0 {
		json.Unmarshal(ri.Config, &c)
	}
	b, err := json.Marshal(struct {
		BenchmarkID string  `json:"benchmark_id,omitempty"`
		RandomSeed  *uint64 `json:"random_seed,omitempty"`
	}{id, c.Seed})
	if err != nil {
		return nil
	}
	return b
}
