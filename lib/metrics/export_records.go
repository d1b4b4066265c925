package metrics

import (
	"bufio"
	"io"

	"github.com/aiperf/toolkit/lib/result"
)

// DefaultWorkerID names the worker and record processor in
// profile_export.jsonl metadata.
const DefaultWorkerID = "aiperf-replay"

// RecordWriter writes profile_export.jsonl, one line per profiling request
// in the Python aiperf's MetricRecordInfo shape (as its docs show it, every
// metadata key present, null when unknown):
//
//	{"metadata":{"session_num":…,"x_request_id":…,"x_correlation_id":…,"conversation_id":…,
//	 "turn_index":…,"request_start_ns":…,"request_ack_ns":…,"request_end_ns":…,
//	 "worker_id":…,"record_processor_id":…,"benchmark_phase":"profiling",
//	 "was_cancelled":…,"cancellation_time_ns":…},
//	 "metrics":{"time_to_first_token":{"value":…,"unit":"ms"},…},"error":null}
//
// Metrics are in display units, integers where aiperf's are; a failed
// request has error {code, type, message} and its error metrics. Warmup
// records are skipped. Write does not allocate once its buffer has grown.
// Not safe for concurrent use; Flush before closing the underlying writer.
type RecordWriter struct {
	w        *bufio.Writer
	ev       evaluator
	x        values
	buf      []byte
	n        int64
	workerID string
}

// NewRecordWriter writes to w, computing metrics under o.
func NewRecordWriter(w io.Writer, o Options) (*RecordWriter, error) {
	ev, err := o.evaluator()
	if err != nil {
		return nil, err
	}
	return &RecordWriter{w: bufio.NewWriterSize(w, 256<<10), ev: ev, workerID: DefaultWorkerID}, nil
}

// SetWorkerID names the worker (and record processor) in the metadata, e.g.
// after a shard.
func (rw *RecordWriter) SetWorkerID(s string) { rw.workerID = s }

// Count returns the number of lines written.
func (rw *RecordWriter) Count() int64 { return rw.n }

// Flush writes any buffered data.
func (rw *RecordWriter) Flush() error { return rw.w.Flush() }

// Write writes r's line (nothing for a warmup record).
func (rw *RecordWriter) Write(r *result.Record) error {
	rw.ev.note(r)
	if r.Warmup() {
		return nil
	}
	x := &rw.x
	rw.ev.eval(r, x)
	b := rw.buf[:0]
	b = append(b, `{"metadata":{"session_num":`...)
	b = appendInt(b, int64(r.SessionNum))
	b = append(b, `,"x_request_id":`...)
	b = appendStrOrNull(b, r.RequestID)
	b = append(b, `,"x_correlation_id":`...)
	b = appendStrOrNull(b, r.CorrelationID)
	b = append(b, `,"conversation_id":`...)
	b = appendStrOrNull(b, r.Session)
	b = append(b, `,"turn_index":`...)
	b = appendInt(b, int64(r.Turn))
	b = append(b, `,"request_start_ns":`...)
	b = appendInt(b, r.StartNS())
	b = append(b, `,"request_ack_ns":`...)
	b = appendIntOrNull(b, r.FirstByteNS)
	b = append(b, `,"request_end_ns":`...)
	b = appendInt(b, r.EndNS)
	b = append(b, `,"worker_id":`...)
	b = appendString(b, rw.workerID)
	b = append(b, `,"record_processor_id":`...)
	b = appendString(b, rw.workerID)
	b = append(b, `,"benchmark_phase":"profiling","was_cancelled":`...)
	b = appendBool(b, r.Cancelled)
	b = append(b, `,"cancellation_time_ns":`...)
	if r.Cancelled {
		b = appendInt(b, r.EndNS)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `},"metrics":{`...)
	first := true
	for i := id(0); i < numRecord; i++ {
		d := &defs[i]
		if d.has(flagInternal) || d.has(flagNoRecord) {
			continue
		}
		if i == mICL {
			if x.icl == nil {
				continue
			}
			b = appendMetricKey(b, d, &first)
			b = append(b, '[')
			f := convFactor(d.unit, d.disp)
			for j := 1; j < len(x.icl); j++ {
				if j > 1 {
					b = append(b, ',')
				}
				b = appendFloat(b, float64(x.icl[j]-x.icl[j-1])*f, true)
			}
			b = append(b, ']')
			b = appendMetricUnit(b, d)
			continue
		}
		if !x.ok(i) {
			continue
		}
		b = appendMetricKey(b, d, &first)
		b = appendValue(b, d, x.v[i])
		b = appendMetricUnit(b, d)
	}
	// good_request_count is written per request: it lacks aiperf's
	// NO_INDIVIDUAL_RECORDS flag.
	if x.good >= 0 {
		d := &defs[mGoodCount]
		b = appendMetricKey(b, d, &first)
		b = appendInt(b, int64(x.good))
		b = appendMetricUnit(b, d)
	}
	b = append(b, `},"error":`...)
	if x.valid {
		b = append(b, "null"...)
	} else {
		e := x.err
		b = append(b, `{"code":`...)
		if e.Code != 0 {
			b = appendInt(b, int64(e.Code))
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"type":`...)
		b = appendStrOrNull(b, e.Type)
		b = append(b, `,"message":`...)
		b = appendString(b, e.Message)
		b = append(b, '}')
	}
	b = append(b, '}', '\n')
	rw.buf = b
	rw.n++
	_, err := rw.w.Write(b)
	return err
}

// WriteRecords writes the profile_export.jsonl lines of every record src
// yields (until io.EOF) to w and returns how many it wrote.
func WriteRecords(w io.Writer, src Source, o Options) (int64, error) {
	rw, err := NewRecordWriter(w, o)
	if err != nil {
		return 0, err
	}
	var r result.Record
	for {
		err := src.Next(&r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return rw.Count(), err
		}
		if err := rw.Write(&r); err != nil {
			return rw.Count(), err
		}
	}
	return rw.Count(), rw.Flush()
}

func appendMetricKey(b []byte, d *def, first *bool) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = appendString(b, d.tag)
	return append(b, `:{"value":`...)
}

func appendMetricUnit(b []byte, d *def) []byte {
	b = append(b, `,"unit":`...)
	b = appendString(b, d.disp.tag)
	return append(b, '}')
}

// appendValue writes a base-unit value in the display unit: integers stay
// integers when no conversion applies, as aiperf's int metrics do.
func appendValue(b []byte, d *def, v float64) []byte {
	if d.unit == d.disp && d.has(flagInt) {
		return appendInt(b, int64(v))
	}
	return appendFloat(b, v*convFactor(d.unit, d.disp), true)
}

func appendStrOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, s)
}

func appendIntOrNull(b []byte, v int64) []byte {
	if v == 0 {
		return append(b, "null"...)
	}
	return appendInt(b, v)
}
