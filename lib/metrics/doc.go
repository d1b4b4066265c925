// Package metrics turns aiperf-replay's per-request records (lib/result)
// into the Python aiperf's metrics and files: the same tags, definitions,
// units and statistics, plus what aiperf lacks, the send lateness of every
// request against its schedule.
//
//   - Summarize computes a run's exact summary (avg, min, max, sum,
//     population std and numpy's linear-interpolation p1..p99) from one or
//     many records files in a few passes and bounded memory.
//   - SummarizeSlices summarizes each time window of a run the same way
//     (the Python aiperf's window rule), and WriteTimeslicesJSON and
//     WriteTimeslicesCSV write profile_export_aiperf_timeslices.json and
//     .csv; Slices.Percentiles gives a chart each window's p50 and p99.
//   - SummarizeSteady finds a run's steady-state window (requests in
//     flight at or above a fraction of the target, vllm-bench's method)
//     and summarizes the run over it; WriteSteadyConsole and Steady.JSON
//     write it beside the whole run's.
//   - Live aggregates records as they complete, in constant memory, for the
//     progress line and the --max-error-rate gate; its percentiles carry a
//     stated relative error bound (RelativeError).
//   - RecordWriter writes profile_export.jsonl; WriteJSON, WriteCSV and
//     WriteConsole write profile_export_aiperf.json, profile_export_aiperf.csv
//     and the console table in aiperf's shapes.
//
// Warmup records are excluded from all of it. The package never prints and
// imports nothing beyond the standard library and lib/result.
//
// # Where it differs from the Python aiperf
//
//   - avg and std use compensated summation where numpy sums pairwise; they
//     agree to a few ulps (percentiles, min and max agree bit for bit), and
//     "sum" is the compensated sum, not aiperf's running float sum.
//   - error_summary is ordered by count (then code, type, message), not by
//     first occurrence, so shards summarize like their concatenation; after
//     1,000 distinct messages further ones are counted under their code and
//     type, and messages are cut at 4 KiB.
//   - usage_discrepancy_count counts a request when any usage diff it has
//     exceeds 10 % (aiperf needs both the prompt and the completion diff).
//   - profile_export.jsonl writes every metadata key, null when unknown, and
//     "error": null for a success, as aiperf's documentation shows the file
//     (its newer writer omits nulls; both parse under its models);
//     worker_id and record_processor_id name this tool.
//   - send_lateness and schedule_relative_latency are this package's own
//     metrics; they are written beside aiperf's, which readers that iterate
//     the metrics dict or the summary's keys simply see as more metrics.
//   - itl_near_zero_count (ours) counts the requests whose tokens arrived
//     together (ITL below ITLNearZeroNS); the console explains them.
//   - The console says the client fell behind its schedule from lateness
//     relative to each request's own latency, sustained over a window or
//     growing along the run (see Lateness), never from one percentile.
//   - The console table is plain text in rich's box style, one line per
//     metric, titled DefaultTitle.
package metrics
