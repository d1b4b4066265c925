#!/usr/bin/env python3
"""Validate aiperf-replay's run folders against the Python aiperf's own models.

Usage: validate.py --src AIPERF_SOURCE_TREE DIR...

AIPERF_SOURCE_TREE is a checkout of github.com/ai-dynamo/aiperf (its root or its
src/); nothing of it is copied here: its package is imported from there, with the
packages only its command line, UI and transport use stubbed (cyclopts, zmq, rich,
...), so that pydantic (2.x), numpy and scipy are all it needs. Every export file
under each DIR is checked, a line a file: PASS or FAIL with aiperf's own error.

  profile_export_aiperf.json             JsonExportData, and what its UserConfig reads
                                         back: the schedule's timing mode, no default
                                         filled in for a count or concurrency the run had
  profile_export_aiperf_timeslices.json  TimesliceCollectionExportData
  profile_export.jsonl                   MetricRecordInfo, every line
  server_metrics_export.jsonl            SlimRecord, every line
  server_metrics_export.json             ServerMetricsExportData
  server_metrics_export.csv              equal to what aiperf's ServerMetricsCsvExporter
                                         writes from that JSON (but its version line)
  aggregate/profile_export_aiperf_aggregate.json and .csv
                                         JsonExportData, and equal to what aiperf's
                                         ConfidenceAggregation and aggregate exporters
                                         make of the trials' profile_export_aiperf.json
The toolkit's own files (results.jsonl, trials.json, sweep.json, pages) are not
aiperf's and are skipped; CSVs aiperf has no model or reader for without pandas
(profile_export_aiperf.csv, the time-slice CSV) are parsed only.
Exit 0 when every file passed, 1 when one failed, 2 when the source cannot be
imported.
"""

import argparse
import csv
import importlib.abc
import importlib.machinery
import io
import json
import logging
import math
import os
import re
import sys
import tempfile
import types

# Packages the model modules reach only through the CLI, the UI, the services
# and the transports; stubbed only when absent.
CLI_ONLY = {
    "cyclopts", "rich", "textual", "zmq", "aiohttp", "aiofiles", "uvloop", "setproctitle",
    "psutil", "tqdm", "msgspec", "jmespath", "fastapi", "uvicorn", "starlette_compress",
    "prometheus_client", "huggingface_hub", "transformers", "jinja2", "ffmpeg", "soundfile",
    "PIL", "kaleido", "matplotlib", "plotly", "dash", "dash_bootstrap_components", "seaborn",
    "pandas", "pyarrow", "zstandard", "nvidia_ml_py", "pynvml",
}
stubbed = set()


class _StubType(type):
    """A class that stands for any name of a stubbed package."""

    def __new__(mcs, name, bases, ns, **kwargs):
        return super().__new__(mcs, name, bases, ns)

    def __init__(cls, name, bases, ns, **kwargs):
        super().__init__(name, bases, ns)

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StubType(name, (object,), {})

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # a decorator
        return _StubType("instance", (object,), {})

    def __getitem__(cls, key):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __iter__(cls):
        return iter(())


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _StubType(name, (object,), {"__module__": self.__name__})
        setattr(self, name, value)
        return value


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top not in CLI_ONLY:
            return None
        stubbed.add(top)
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def setup(src):
    """Makes aiperf importable from its source tree; returns its version."""
    root = src[:-4] if src.rstrip("/").endswith("/src") else src
    pkg = os.path.join(root, "src")
    if not os.path.isdir(os.path.join(pkg, "aiperf")):
        sys.exit(f"validate.py: {src}: no src/aiperf there (give the aiperf checkout)")
    version = "0"
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
            m = re.search(r'^version\s*=\s*"([^"]+)"', f.read(), re.M)
            version = m.group(1) if m else version
    except OSError:
        pass
    # aiperf finds its plugin registry through its package's entry point: a
    # distribution's metadata beside the source says where it is.
    dist = tempfile.mkdtemp(prefix="aiperf-dist-")
    info = os.path.join(dist, f"aiperf-{version}.dist-info")
    os.mkdir(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: aiperf\nVersion: {version}\n")
    with open(os.path.join(info, "entry_points.txt"), "w") as f:
        f.write("[aiperf.plugins]\naiperf = aiperf.plugin:plugins.yaml\n")
    sys.path[:0] = [pkg, dist]
    for mod in ("numpy", "scipy", "ruamel.yaml"):
        try:
            __import__(mod)
        except ImportError:
            # Debian's python3-numpy, -scipy, -ruamel.yaml, for the same
            # Python version when this interpreter is another install of it
            deb = "/usr/lib/python3/dist-packages"
            if os.path.isdir(deb) and deb not in sys.path:
                sys.path.append(deb)
    sys.meta_path.append(_StubFinder())
    return version


class Warnings(logging.Handler):
    """Collects the warnings aiperf logs while a model validates."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


def load_models():
    from aiperf.common.models.export_models import JsonExportData, TimesliceCollectionExportData
    from aiperf.common.models.record_models import MetricRecordInfo
    from aiperf.common.models.server_metrics_models import ServerMetricsExportData, SlimRecord

    return types.SimpleNamespace(
        JsonExportData=JsonExportData, Timeslices=TimesliceCollectionExportData,
        MetricRecordInfo=MetricRecordInfo, ServerMetricsExportData=ServerMetricsExportData,
        SlimRecord=SlimRecord)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check_export(M, path):
    """JsonExportData, and what its UserConfig reads back."""
    text = read(path)
    caught = Warnings()
    logging.getLogger().addHandler(caught)
    try:
        data = M.JsonExportData.model_validate_json(text)
    finally:
        logging.getLogger().removeHandler(caught)
    cfg = data.input_config
    raw = json.loads(text).get("input_config") or {}
    replay = raw.get("aiperf_replay") or {}
    problems = [f"aiperf filled in a default: {w}" for w in caught.records if "value provided" in w]
    schedule = replay.get("schedule")
    if cfg is not None and schedule:
        mode = str(cfg.timing_mode).lower()
        want = {"fixed": "fixed_schedule", "rate": "request_rate", "concurrency": "request_rate"}.get(schedule)
        if want and want not in mode:
            problems.append(f"the {schedule} schedule reads back as timing mode {mode}")
        arrival = str(cfg.loadgen.arrival_pattern).lower()
        if schedule == "concurrency" and "concurrency_burst" not in arrival:
            problems.append(f"the concurrency schedule reads back as arrival {arrival}")
    if problems:
        raise ValueError("; ".join(problems))


def check_jsonl(model):
    def check(path):
        n = 0
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    model.model_validate_json(line)
                except Exception as e:
                    raise ValueError(f"line {i}: {e}") from None
                n += 1
        if n == 0:
            raise ValueError("no lines")
    return check


def check_server_csv(M, path):
    """The CSV equals what aiperf's CSV exporter writes from the JSON."""
    from aiperf.common.models.server_metrics_models import (
        ServerMetricsEndpointSummary, ServerMetricsResults)
    from aiperf.exporters.utils import normalize_endpoint_display
    from aiperf.server_metrics.csv_exporter import ServerMetricsCsvExporter

    data = M.ServerMetricsExportData.model_validate_json(read(os.path.join(os.path.dirname(path), "server_metrics_export.json")))
    summaries = {}
    for url, info in (data.summary.endpoint_info or {}).items():
        metrics = {}
        for name, m in data.metrics.items():
            series = [s for s in m.series if s.endpoint_url == url]
            if series:
                metrics[name] = m.model_copy(update={"series": series})
        summaries[normalize_endpoint_display(url)] = ServerMetricsEndpointSummary(endpoint_url=url, info=info, metrics=metrics)
    exporter = ServerMetricsCsvExporter.__new__(ServerMetricsCsvExporter)
    exporter._server_metrics_results = ServerMetricsResults(
        benchmark_id=data.benchmark_id, endpoint_summaries=summaries, start_ns=0, end_ns=0)
    want = exporter._generate_content()
    got = read_bytes(path)
    drop = lambda s: [l for l in s.split("\n") if not l.startswith("# aiperf_version:") and not l.startswith("# Note:")]
    wl, gl = drop(want), drop(got)
    for i, (w, g) in enumerate(zip(wl, gl), 1):
        if w != g:
            raise ValueError(f"differs from aiperf's at line {i}:\n    ours:   {g!r}\n    aiperf: {w!r}")
    if len(wl) != len(gl):
        raise ValueError(f"{len(gl)} lines, aiperf's {len(wl)}")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8")


def aggregate_of(trials_dir, level):
    """aiperf's aggregate of the trials in trials_dir (the folders aggregate/
    names in its metadata), as (json text, csv text)."""
    from aiperf.exporters.aggregate import (AggregateConfidenceCsvExporter,
                                            AggregateConfidenceJsonExporter, AggregateExporterConfig)
    from aiperf.orchestrator.aggregation.confidence import ConfidenceAggregation
    from aiperf.orchestrator.models import RunResult
    from aiperf.orchestrator.orchestrator import MultiRunOrchestrator
    from pathlib import Path

    ours = json.loads(read(os.path.join(trials_dir, "aggregate", "profile_export_aiperf_aggregate.json")))
    meta = ours.get("metadata", {})
    labels = list(meta.get("run_labels", [])) + [f["label"] for f in meta.get("failed_runs", [])]
    results = []
    for label in sorted(labels):
        metrics = MultiRunOrchestrator._extract_summary_metrics(None, Path(trials_dir) / label)
        rc = metrics.get("request_count")
        results.append(RunResult(label=label, success=bool(rc and rc.avg), summary_metrics=metrics))
    result = ConfidenceAggregation(confidence_level=level).aggregate(results)
    result.metadata["cooldown_seconds"] = meta.get("cooldown_seconds")
    config = AggregateExporterConfig(result=result, output_dir=Path(trials_dir) / "aggregate")
    j = AggregateConfidenceJsonExporter.__new__(AggregateConfidenceJsonExporter)
    c = AggregateConfidenceCsvExporter.__new__(AggregateConfidenceCsvExporter)
    for e in (j, c):
        e._config, e._result, e._output_dir = config, result, config.output_dir
    return j._generate_content(), c._generate_content()


def same(a, b, where="", scale=1.0):
    """Compares JSON values; returns the first difference or None. Numbers
    agree to 1e-9 of the scale of their figure (a confidence bound is a
    difference of two larger numbers: the t quantiles of two libraries
    agree to about 1e-10, not the bound that cancels them)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if isinstance(b.get("mean"), (int, float)):
            scale = max(1.0, abs(b["mean"]), abs(b.get("ci_high") or 0), abs(b.get("ci_low") or 0))
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: {'only aiperf has it' if k in b else 'aiperf has none'}"
            d = same(a[k], b[k], f"{where}.{k}", scale)
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items, aiperf's {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = same(x, y, f"{where}[{i}]", scale)
            if d:
                return d
        return None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        ok = a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9 * scale)
        return None if ok else f"{where}: {a} against aiperf's {b}"
    return None if a == b else f"{where}: {a!r} against aiperf's {b!r}"


def check_aggregate_json(M, path):
    M.JsonExportData.model_validate_json(read(path))
    trials = os.path.dirname(os.path.dirname(path))
    ours = json.loads(read(path))
    want, _ = aggregate_of(trials, ours["metadata"]["confidence_level"])
    want = json.loads(want)
    want["aiperf_version"] = ours.get("aiperf_version")
    d = same(ours, want)
    if d:
        raise ValueError(d)


def check_aggregate_csv(M, path):
    trials = os.path.dirname(os.path.dirname(path))
    meta = json.loads(read(os.path.join(os.path.dirname(path), "profile_export_aiperf_aggregate.json")))["metadata"]
    _, want = aggregate_of(trials, meta["confidence_level"])
    got = read_bytes(path)
    rows = lambda s: list(csv.reader(io.StringIO(s, newline="")))
    wr, gr = rows(want), rows(got)
    # aiperf orders the metrics as a set iterates (by hash): compare as maps
    split = lambda rs: (rs[0], {r[0]: r for r in rs[1:] if r and r[0] and not r[0][0].isupper()}, [r for r in rs if r and r[0][:1].isupper()])
    wh, wm, wmeta = split(wr)
    gh, gm, gmeta = split(gr)
    if wh != gh:
        raise ValueError(f"header {gh}, aiperf's {wh}")
    if set(wm) != set(gm):
        raise ValueError(f"metrics differ: ours only {sorted(set(gm) - set(wm))[:5]}, aiperf's only {sorted(set(wm) - set(gm))[:5]}")
    for k in wm:
        for col, (w, g) in enumerate(zip(wm[k], gm[k])):
            if w != g and not numeric_close(w, g):
                raise ValueError(f"{k} {wh[col]}: {g} against aiperf's {w}")
    if wmeta != gmeta:
        raise ValueError(f"metadata rows {gmeta}, aiperf's {wmeta}")
    if not got.endswith("\r\n") or "\r\n" not in got.split("\n", 1)[0] + "\n":
        raise ValueError("rows do not end in CRLF as Python's csv module writes them")


def numeric_close(w, g):
    """Cells of a fixed number of decimals that differ only by the rounding
    of a last digit (the figures agree to about 1e-12)."""
    try:
        a, b = float(w), float(g)
    except ValueError:
        return False
    decimals = len(w.split(".")[1]) if "." in w else 0
    return abs(a - b) <= 10 ** -decimals * 1.0000001


def parse_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        if not list(csv.reader(f)):
            raise ValueError("empty")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True, help="the aiperf source tree (its root or src/)")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    version = setup(args.src)
    try:
        M = load_models()
    except Exception as e:
        print(f"validate.py: cannot import aiperf {version} from {args.src}: {e!r}", file=sys.stderr)
        return 2
    print(f"aiperf {version} from {args.src}; stubbed (absent, CLI-only): {', '.join(sorted(stubbed)) or 'none'}")
    checks = {
        "profile_export_aiperf.json": lambda p: check_export(M, p),
        "profile_export_aiperf_timeslices.json": lambda p: M.Timeslices.model_validate_json(read(p)),
        "profile_export.jsonl": check_jsonl(M.MetricRecordInfo),
        "server_metrics_export.jsonl": check_jsonl(M.SlimRecord),
        "server_metrics_export.json": lambda p: M.ServerMetricsExportData.model_validate_json(read(p)),
        "server_metrics_export.csv": lambda p: check_server_csv(M, p),
        "profile_export_aiperf_aggregate.json": lambda p: check_aggregate_json(M, p),
        "profile_export_aiperf_aggregate.csv": lambda p: check_aggregate_csv(M, p),
        "profile_export_aiperf.csv": parse_csv,
        "profile_export_aiperf_timeslices.csv": parse_csv,
    }
    passed = failed = 0
    for d in args.dirs:
        for root, subdirs, files in os.walk(d):
            subdirs.sort()
            for name in sorted(files):
                check = checks.get(name)
                if check is None:
                    continue
                path = os.path.join(root, name)
                try:
                    check(path)
                except Exception as e:
                    failed += 1
                    msg = str(e).strip().replace("\n", "\n    ")
                    print(f"FAIL {path}\n    {msg[:3000]}")
                    continue
                passed += 1
                print(f"PASS {path}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
