package replaycmd

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/result"
)

// The "input_config" of profile_export_aiperf.json and of the time-slice
// JSON is the Python aiperf's UserConfig, which its readers validate
// (JsonExportData.input_config: UserConfig | None) and `aiperf plot` reads
// (model from endpoint.model_names[0], endpoint.type, loadgen.concurrency
// and request_count, output.slice_duration). The keys, enum values and
// constraints follow ai-dynamo/aiperf:
//
//	src/aiperf/common/models/export_models.py    896729cf (JsonExportData schema 1.1)
//	src/aiperf/common/config/user_config.py      08c788fe
//	src/aiperf/common/config/endpoint_config.py  b1618d2b (urls) and the older url
//	src/aiperf/common/config/loadgen_config.py   c431ed30
//	src/aiperf/common/config/input_config.py     896729cf
//	src/aiperf/common/config/output_config.py    and plot/core/data_loader.py 591704ea
//
// aiperf dumps the config with exclude_unset, so only what the user set
// (or a validator filled in) appears; this does the same from the run's
// settings. It leaves out what aiperf's validators would refuse on another
// machine: input.file (parse_file requires the file to exist there, and
// the replayed file is a store, not a dataset aiperf can read),
// custom_dataset_type and fixed_schedule (which require that file), and
// the fixed schedule's offsets (which require fixed_schedule). Those, and
// every setting of the run as given, stay under "aiperf_replay", an extra
// member aiperf's config models ignore (pydantic's default).
type aiperfUserConfig struct {
	Endpoint    aiperfEndpoint `json:"endpoint"`
	Input       *aiperfInput   `json:"input,omitempty"`
	Output      *aiperfOutput  `json:"output,omitempty"`
	Loadgen     aiperfLoadgen  `json:"loadgen"`
	BenchmarkID string         `json:"benchmark_id,omitempty"`
	Replay      replayInfo     `json:"aiperf_replay"`
}

type aiperfEndpoint struct {
	// ModelNames is required by aiperf; empty when the store's bodies name
	// no model or several.
	ModelNames     []string `json:"model_names"`
	CustomEndpoint string   `json:"custom_endpoint,omitempty"`
	Type           string   `json:"type,omitempty"` // EndpointType: chat, completions
	Streaming      bool     `json:"streaming"`
	// URL is the older single-URL field, URLs the newer list; each aiperf
	// version reads its own and ignores the other.
	URL            string   `json:"url,omitempty"`
	URLs           []string `json:"urls,omitempty"`
	TimeoutSeconds float64  `json:"timeout_seconds,omitempty"`
	ReuseStrategy  string   `json:"connection_reuse_strategy,omitempty"` // set when not pooled (conn.go)
}

type aiperfLoadgen struct {
	BenchmarkDuration float64 `json:"benchmark_duration,omitempty"`
	// BenchmarkGracePeriod only with BenchmarkDuration (aiperf refuses it
	// alone).
	BenchmarkGracePeriod *float64 `json:"benchmark_grace_period,omitempty"`
	Concurrency          int      `json:"concurrency,omitempty"`
	RequestRate          float64  `json:"request_rate,omitempty"`
	// ArrivalPattern: constant, poisson, gamma or concurrency_burst (what
	// aiperf's validator sets when no rate is given).
	ArrivalPattern     string  `json:"arrival_pattern,omitempty"`
	ArrivalSmoothness  float64 `json:"arrival_smoothness,omitempty"`
	RequestCount       int64   `json:"request_count,omitempty"`
	WarmupRequestCount int64   `json:"warmup_request_count,omitempty"`
	// RequestCancellationRate is a percentage in (0, 100]; the delay only
	// with a rate.
	RequestCancellationRate  float64  `json:"request_cancellation_rate,omitempty"`
	RequestCancellationDelay *float64 `json:"request_cancellation_delay,omitempty"`
}

type aiperfInput struct {
	RandomSeed *uint64            `json:"random_seed,omitempty"`
	Goodput    map[string]float64 `json:"goodput,omitempty"`
}

type aiperfOutput struct {
	ArtifactDirectory string  `json:"artifact_directory,omitempty"`
	SliceDuration     float64 `json:"slice_duration,omitempty"` // seconds
}

// replayInfo is what aiperf's config has no place for: the tool, the store
// replayed, the schedule, and the settings as given (the records' "config").
type replayInfo struct {
	Tool     string          `json:"tool,omitempty"`
	Store    storeInfo       `json:"store"`
	Schedule string          `json:"schedule,omitempty"`
	Shard    *int            `json:"shard,omitempty"`
	Shards   int             `json:"shards,omitempty"`
	Offered  string          `json:"offered,omitempty"`
	Settings json.RawMessage `json:"settings,omitempty"`
}

// storeInfo is result.StoreInfo with the records' member names.
type storeInfo struct {
	Path     string `json:"path"`
	SHA256   string `json:"sha256,omitempty"`
	Records  int64  `json:"records"`
	Sessions int64  `json:"sessions"`
}

// flatConfig is the records' "config" (options.inputConfig), as far as the
// aiperf shape needs it. Absent members read as zero.
type flatConfig struct {
	Endpoint      string  `json:"endpoint"`
	Path          string  `json:"path"`
	Concurrency   int     `json:"concurrency"`
	Rate          float64 `json:"rate"`
	Arrival       string  `json:"arrival"`
	Smoothness    float64 `json:"smoothness"`
	RequestCount  int64   `json:"request_count"`
	Warmup        int64   `json:"warmup"`
	Duration      string  `json:"duration"`
	Grace         string  `json:"grace"`
	CancelRate    float64 `json:"cancel_rate"`
	CancelAfter   string  `json:"cancel_after"`
	Timeout       string  `json:"timeout"`
	Seed          *uint64 `json:"seed"`
	Goodput       string  `json:"goodput"`
	Output        string  `json:"output"`
	SliceDuration string  `json:"slice_duration"`
	Reuse         string  `json:"connection_reuse"`
}

// aiperfInputConfig writes a run's settings (its records' run info) as
// aiperf's UserConfig. slice, when above 0, is the time-slice duration the
// exports are written with (report's --slice-duration); else the run's.
// id is the exports' benchmark_id (the run's, or a merge's). The same run
// info gives the same bytes, so `report` over a run's records writes the
// input_config the run wrote.
func aiperfInputConfig(ri *result.RunInfo, slice time.Duration, id string) json.RawMessage {
	var c flatConfig
	if len(ri.Config) > 0 {
		json.Unmarshal(ri.Config, &c) // a member of another type reads as zero
	}
	seconds := func(s string) float64 {
		if s == "" {
			return 0
		}
		d, err := parseMS(s)
		if err != nil || d <= 0 {
			return 0
		}
		return d.Seconds()
	}
	u := aiperfUserConfig{
		Endpoint: aiperfEndpoint{
			ModelNames:     []string{},
			Type:           ri.Endpoint,
			Streaming:      ri.Streaming,
			URL:            ri.URL,
			TimeoutSeconds: seconds(c.Timeout),
			ReuseStrategy:  aiperfReuseStrategy(c.Reuse),
		},
		BenchmarkID: id,
		Replay: replayInfo{
			Tool:     ri.Tool,
			Store:    storeInfo(ri.Store),
			Schedule: ri.Schedule,
			Offered:  ri.Offered,
			Settings: ri.Config,
		},
	}
	if ri.Model != "" {
		u.Endpoint.ModelNames = []string{ri.Model}
	}
	if ri.URL != "" {
		u.Endpoint.URLs = []string{ri.URL}
	}
	if ri.Path != "" && ri.Path != request.Path(ri.Endpoint) {
		u.Endpoint.CustomEndpoint = ri.Path
	}
	if ri.Shards > 0 {
		shard := ri.Shard
		u.Replay.Shard, u.Replay.Shards = &shard, ri.Shards
	}

	lg := &u.Loadgen
	switch ri.Schedule {
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

	in := aiperfInput{RandomSeed: c.Seed, Goodput: goodputMap(c.Goodput)}
	if in.RandomSeed != nil || in.Goodput != nil {
		u.Input = &in
	}
	out := aiperfOutput{ArtifactDirectory: c.Output, SliceDuration: seconds(c.SliceDuration)}
	if slice > 0 {
		out.SliceDuration = slice.Seconds()
	}
	if out != (aiperfOutput{}) {
		u.Output = &out
	}
	b, err := json.Marshal(u)
	if err != nil { // only finite numbers and strings: cannot happen
		return nil
	}
	return b
}

func positive(v float64) float64 {
	if v > 0 && !math.IsInf(v, 0) {
		return v
	}
	return 0
}

// goodputMap reads --goodput ("METRIC:VALUE ...") as aiperf's input.goodput
// ({tag: value}); nil when empty or malformed (the run refused a malformed
// one before sending).
func goodputMap(s string) map[string]float64 {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil
	}
	m := make(map[string]float64, len(fields))
	for _, f := range fields {
		k, v, ok := strings.Cut(f, ":")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || k == "" || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		m[k] = x
	}
	return m
}

// runConfig is a finished run's input_config and run_info: from the run
// info its records carry, as `report` reads it, or, when no record was
// written, from the plan.
func runConfig(recPath string, p *replay.Plan, st *replay.Stats) (inputConfig, runInfo json.RawMessage) {
	ri := readRuns([]string{recPath})[0]
	if ri == nil {
		ri = &result.RunInfo{
			ID: st.RunID, URL: p.Options.URL, Path: p.Path, Endpoint: p.Endpoint, Model: p.Model,
			Streaming: p.Streaming, Schedule: p.Schedule, Offered: p.Offered, Config: p.Options.Config,
		}
	}
	return aiperfInputConfig(ri, 0, st.RunID), aiperfRunInfo(ri, st.RunID)
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
