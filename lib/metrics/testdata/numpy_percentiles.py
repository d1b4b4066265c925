#!/usr/bin/env python3
"""Writes numpy_percentiles.json: data sets and what numpy says of them.

The Go tests check lib/metrics against these numbers bit for bit
(percentiles, min, max) and to a few ulps (mean, population std). Run with a
numpy >= 1.22 (method="linear" is the default of np.percentile):

    python3 lib/metrics/testdata/numpy_percentiles.py > lib/metrics/testdata/numpy_percentiles.json
"""
import json
import random

import numpy as np

rng = random.Random(20260901)
sets = []


def add(name, values):
    arr = np.asarray(values, dtype=np.float64)
    ps = np.percentile(arr, [1, 5, 10, 25, 50, 75, 90, 95, 99])
    sets.append({
        "name": name,
        "values": [float(v) for v in values],
        "min": float(np.min(arr)),
        "max": float(np.max(arr)),
        "mean": float(np.mean(arr)),
        "std": float(np.std(arr)),
        "percentiles": [float(p) for p in ps],
    })


add("one", [42.0])
add("two", [3.0, 1.0])
add("three", [5.0, 1.0, 3.0])
add("identical", [7.0] * 101)
add("ttft_ns", [rng.randint(20_000_000, 60_000_000) for _ in range(1000)])
add("itl_frac_ns", [rng.lognormvariate(16, 0.3) for _ in range(997)])
add("tokens", [rng.choice([64, 128, 200, 256, 512, 1024, 2047]) for _ in range(503)])
add("negative_mixed", [rng.gauss(0, 5e6) for _ in range(250)])
add("heavy_tail", [rng.paretovariate(1.1) * 1e6 for _ in range(2000)])
add("tiny", [rng.random() * 1e-6 for _ in range(64)])
add("ms_like", [rng.randint(1, 10_000) * 1e-3 for _ in range(333)])
print("{\"numpy\": %s, \"sets\": [" % json.dumps(np.__version__))
print(",\n".join(json.dumps(s) for s in sets))
print("]}")
