#!/usr/bin/env python3
"""Checks the golden files against the Python aiperf's export shapes.

Not run by `go test` (it needs pydantic >= 2); run it after `go test -update`:

    python3 lib/metrics/testdata/check_shapes.py lib/metrics/testdata/golden

The models below restate, field by field, the layouts aiperf exports
(JsonExportData / JsonMetricResult / ErrorDetailsCount for
profile_export_aiperf.json, MetricRecordInfo / MetricRecordMetadata /
MetricValue / ErrorDetails for profile_export.jsonl). Each file must parse
under them and re-serialize to the same bytes the way aiperf serializes:
model_dump_json(indent=2, exclude_unset=True, exclude_none=True) for the
summary, model_dump_json() per record line, and Python's csv module for the
CSV.
"""
import csv
import io
import sys
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model


class MetricStats(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unit: str
    avg: float | None = None
    p1: float | None = None
    p5: float | None = None
    p10: float | None = None
    p25: float | None = None
    p50: float | None = None
    p75: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    min: int | float | None = None
    max: int | float | None = None
    std: float | None = None


class ErrorInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: int | None = None
    type: str | None = None
    message: str


class ErrorCount(BaseModel):
    model_config = ConfigDict(extra="forbid")
    error_details: ErrorInfo
    count: int


DECLARED = (
    "request_throughput request_latency request_count time_to_first_token time_to_second_token "
    "inter_token_latency output_token_throughput output_token_throughput_per_user output_sequence_length "
    "input_sequence_length goodput good_request_count output_token_count reasoning_token_count "
    "min_request_timestamp max_response_timestamp inter_chunk_latency total_output_tokens "
    "total_reasoning_tokens benchmark_duration total_isl total_osl error_request_count error_isl "
    "total_error_isl"
).split()

fields: dict[str, Any] = {
    "schema_version": (str | None, None),
    "aiperf_version": (str | None, None),
    "benchmark_id": (str | None, None),
}
fields.update({name: (MetricStats | None, None) for name in DECLARED})
fields.update({
    "telemetry_data": (Any, None),
    "input_config": (dict | None, None),
    "was_cancelled": (bool | None, None),
    "error_summary": (list[ErrorCount] | None, None),
    "start_time": (datetime | None, None),
    "end_time": (datetime | None, None),
})
Summary = create_model("Summary", __config__=ConfigDict(extra="allow"), **fields)


class Metadata(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_num: int
    x_request_id: str | None = None
    x_correlation_id: str | None = None
    conversation_id: str | None = None
    turn_index: int | None = None
    request_start_ns: int
    request_ack_ns: int | None = None
    request_end_ns: int
    worker_id: str
    record_processor_id: str
    benchmark_phase: str
    was_cancelled: bool = False
    cancellation_time_ns: int | None = None


class Value(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: int | float | list[int] | list[float]
    unit: str


class RecordLine(BaseModel):
    model_config = ConfigDict(extra="forbid")
    metadata: Metadata
    metrics: dict[str, Value]
    error: ErrorInfo | None = None


def main(folder: str) -> int:
    bad = 0
    raw = open(f"{folder}/profile_export_aiperf.json", encoding="utf-8").read()
    summary = Summary.model_validate_json(raw)
    for name, value in list((summary.__pydantic_extra__ or {}).items()):
        setattr(summary, name, MetricStats.model_validate(value))
    again = summary.model_dump_json(indent=2, exclude_unset=True, exclude_none=True)
    if again != raw:
        print("profile_export_aiperf.json: differs from pydantic's serialization")
        bad += 1

    n = 0
    for n, line in enumerate(open(f"{folder}/profile_export.jsonl", encoding="utf-8"), 1):
        rec = RecordLine.model_validate_json(line)
        if rec.model_dump_json() != line.rstrip("\n"):
            print(f"profile_export.jsonl:{n}: differs from pydantic's serialization")
            bad += 1

    data = open(f"{folder}/profile_export_aiperf.csv", encoding="utf-8", newline="").read()
    rows = list(csv.reader(io.StringIO(data, newline="")))
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    if buf.getvalue() != data:
        print("profile_export_aiperf.csv: differs from Python's csv writer")
        bad += 1
    print(f"checked the summary, {n} record lines and the CSV: {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "lib/metrics/testdata/golden"))
