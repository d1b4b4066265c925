// Package metrics turns aiperf-replay's per-request records (lib/result)
// into the Python aiperf's metrics and files: the same tags, definitions,
// units and statistics, plus what aiperf lacks, the send lateness of every
// request against its schedule.
//
//   - Summarize computes a run's exact summary (avg, min, max, sum,
//     population std and numpy's linear-interpolation p1..p99) from one or
//     many records files in a few passes and bounded memory.
//   - Live aggregates records as they complete, in constant memory, for the
//     progress line and the --max-error-rate gate; its percentiles carry a
//     stated relative error bound.
//   - RecordWriter writes profile_export.jsonl; WriteJSON, WriteCSV and
//     WriteConsole write profile_export_aiperf.json, profile_export_aiperf.csv
//     and the console table in aiperf's shapes.
//
// Warmup records are excluded from all of it. The package never prints.
package metrics
