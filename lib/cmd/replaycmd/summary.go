package replaycmd

import (
	"encoding/json"
	"io"

	"github.com/aiperf/toolkit/lib/internal/redact"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/rundir"
)

// Output files, in the Python aiperf's names and shapes (lib/rundir names
// them).
const (
	recordsFile      = rundir.ResultsFile
	exportJSONFile   = rundir.ExportJSONFile
	exportCSVFile    = rundir.ExportCSVFile
	exportRecordFile = rundir.ExportRecordFile
)

func parseGoodput(s string) (metrics.Goodput, error) {
	if s == "" {
		return nil, nil
	}
	return metrics.ParseGoodput(s)
}

// The command's files read runs through lib/rundir under these names.

func summarize(files []string, o metrics.Options) (*metrics.Summary, error) {
	return rundir.Summarize(files, o)
}

func summarizeOpen(open func() (metrics.Source, io.Closer, error), o metrics.Options) (*metrics.Summary, error) {
	return metrics.Summarize(open, o)
}

func openResults(files []string) func() (metrics.Source, io.Closer, error) { return rundir.Open(files) }

func inferStreaming(files []string) (bool, error) { return rundir.InferStreaming(files) }

func spoolStdin(r io.Reader, args []string) ([]string, func(), error) {
	return rundir.SpoolStdin(r, args)
}

func displayName(path string) string { return rundir.DisplayName(path) }

func displayNames(files []string) string { return rundir.JoinNames(files) }

func writeOutputs(dir string, s *metrics.Summary, o metrics.Options, run metrics.Run, files []string) error {
	return rundir.WriteExports(dir, s, o, run, files)
}

// inputConfig describes the run for profile_export_aiperf.json. It names
// the variable that held the API key, never the key.
func (o *options) inputConfig(storePath string, schedule string) json.RawMessage {
	cfg := map[string]any{
		"tool":          "aiperf-replay",
		"store":         storePath,
		"url":           redact.URL(o.url),
		"endpoint":      o.endpoint,
		"path":          redact.URL(o.path),
		"schedule":      schedule,
		"concurrency":   o.concurrency,
		"rate":          o.rate,
		"arrival":       o.arrival,
		"smoothness":    o.smoothness,
		"speedup":       o.speedup,
		"start_offset":  o.startOffset,
		"end_offset":    o.endOffset,
		"request_count": o.requestCount,
		"warmup":        o.warmup,
		"duration":      o.duration,
		"grace":         o.grace,
		"cancel_rate":   o.cancelRate,
		"cancel_after":  o.cancelAfter,
		"timeout":       o.timeout,
		"max_response":  o.maxResponse,
		"history":       o.history,
		"seed":          o.seed,
		"per_shard":     o.perShard, // the shard itself is the run info's identity, not a setting
		"start_at":      o.startAt,
		"tokenizer":     o.tokenizer,
		"goodput":       o.goodput,
		"api_key_env":   o.apiKeyEnv,
		"header_names":  headerNames(o.headers.Value()),
		// The exports' input_config (aiperfInputConfig) names these as
		// aiperf does (output.artifact_directory, output.slice_duration).
		"output":         o.out,
		"slice_duration": o.sliceDuration,
	}
	if o.stopOnSaturation {
		cfg["stop_on_saturation"] = o.saturationWindow
	}
	o.conn.config(cfg)
	b, _ := json.Marshal(cfg)
	return b
}

// headerNames lists the names of the extra headers (their values may be
// secrets).
func headerNames(hs []string) []string {
	var out []string
	for _, h := range hs {
		k, _, _ := cutHeader(h)
		out = append(out, k)
	}
	return out
}
