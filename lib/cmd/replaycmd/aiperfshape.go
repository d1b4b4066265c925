package replaycmd

import "encoding/json"

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
// settings. It leaves out what aiperf's validators would refuse:
// custom_dataset_type (the replayed file is a store, not a dataset aiperf
// can read) and the fixed schedule's offsets. The fixed schedule itself
// is input.fixed_schedule with input.file, the store's path, which aiperf
// requires to exist where the export is validated (parse_file), as its
// own exports name their input file. Those, and every setting of the run
// as given, stay under "aiperf_replay", an extra member aiperf's config
// models ignore (pydantic's default). The endpoint types are aiperf
// 0.6.0's (src/aiperf/plugin/plugins.yaml at 1cdae727, 2026-03-13).
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
	// File and FixedSchedule for the fixed schedule: aiperf refuses the
	// one without the other, and a file that is not there.
	File          string  `json:"file,omitempty"`
	FixedSchedule bool    `json:"fixed_schedule,omitempty"`
	RandomSeed    *uint64 `json:"random_seed,omitempty"`
	// Goodput is --goodput as given ("METRIC:VALUE ..."): aiperf's
	// validator parses that string and refuses the dict aiperf dumps.
	Goodput string `json:"goodput,omitempty"`
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
	Endpoint string          `json:"endpoint,omitempty"` // ours, when aiperf's type is another (endpointOf)
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
