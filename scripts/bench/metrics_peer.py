#!/usr/bin/env python3
"""The Python aiperf's way to summarize a records file, as the peer of
lib/metrics.Summarize in scripts/bench/metrics.sh: decode every line, keep
every value of each metric in a growing float64 array (aiperf's MetricArray),
then numpy percentile/mean/std per metric. It computes fewer metrics than
Summarize (request latency, TTFT, TTST, ITL, ICL, ISL, OSL, lateness), so the
comparison flatters it. Prints the figures the script collects.
"""
import json
import resource
import sys
import time

import numpy as np

t0 = time.perf_counter()
vals = {k: [] for k in ("request_latency", "ttft", "ttst", "itl", "icl", "isl", "osl", "lateness")}
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        r = json.loads(line)
        n += 1
        vals["lateness"].append(r["sent_unix_ns"] - r["intended_unix_ns"])
        c = r.get("chunk_offsets_ns")
        if r.get("error") or not c:
            continue
        vals["request_latency"].append(c[-1])
        vals["ttft"].append(c[0])
        if len(c) > 1:
            vals["ttst"].append(c[1] - c[0])
            vals["icl"].extend(b - a for a, b in zip(c, c[1:]))
        u = r.get("usage") or {}
        vals["isl"].append(u.get("prompt_tokens") or r.get("input_tokens"))
        osl = r.get("output_tokens", 0) + r.get("reasoning_tokens", 0)
        vals["osl"].append(osl)
        if osl >= 2:
            vals["itl"].append((c[-1] - c[0]) / (osl - 1))
out = {}
for k, v in vals.items():
    a = np.asarray(v, dtype=np.float64)
    out[k] = (np.percentile(a, [1, 5, 10, 25, 50, 75, 90, 95, 99]), float(np.mean(a)), float(np.std(a)), np.min(a), np.max(a))
sec = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
cpu = ru.ru_utime + ru.ru_stime
print(f"seconds={sec:.3f} cpu_seconds={cpu:.3f} records={n} max_rss_mb={ru.ru_maxrss / 1024:.1f} "
      f"p99_request_latency_ms={out['request_latency'][0][8] * 1e-6:.6f}")
