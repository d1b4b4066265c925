package metrics

// The registry: every metric this package computes, with the Python aiperf's
// tag, header, units and flags. Values are kept in the base unit (ns for
// times) and converted to the display unit only on output, by multiplying
// with (display per second / base per second) exactly as aiperf's
// MetricTimeUnit.convert_to does, so converted values carry aiperf's rounding
// (31742934 ns -> 31.742933999999998 ms).

// unit is a metric unit. Time units know how many of them make a second.
type unit struct {
	tag       string
	perSecond float64 // 0 for units that are not times
	bytes     float64 // bytes in one of the unit; 0 for units that are not sizes
}

var (
	unitNS       = unit{tag: "ns", perSecond: 1e9}
	unitMS       = unit{tag: "ms", perSecond: 1e3}
	unitSec      = unit{tag: "sec", perSecond: 1}
	unitTokens   = unit{tag: "tokens"}
	unitRequests = unit{tag: "requests"}
	unitPercent  = unit{tag: "%"}
	unitReqRate  = unit{tag: "requests/sec"}
	unitTokRate  = unit{tag: "tokens/sec"}
	unitUserRate = unit{tag: "tokens/sec/user"}
	unitBytes    = unit{tag: "B", bytes: 1}
	unitKB       = unit{tag: "KB", bytes: 1024}
	unitCount    = unit{tag: "count"}
	unitRatio    = unit{tag: "ratio"}
)

// convFactor is what a value in from is multiplied by to express it in to.
func convFactor(from, to unit) float64 {
	if from.bytes != 0 && to.bytes != 0 {
		return from.bytes / to.bytes // aiperf's MetricSizeUnit.convert_to
	}
	if from == to || from.perSecond == 0 || to.perSecond == 0 {
		return 1
	}
	return to.perSecond / from.perSecond
}

type mflag uint16

const (
	flagStreaming      mflag = 1 << iota // aiperf STREAMING_ONLY: computed only for streamed responses
	flagNoConsole                        // NO_CONSOLE: not in the console table
	flagErrorOnly                        // ERROR_ONLY: computed from failed requests only
	flagLargerIsBetter                   // LARGER_IS_BETTER: a goodput SLO is a floor (>=), not a ceiling
	flagInternal                         // INTERNAL: computed, never exported
	flagNoRecord                         // NO_INDIVIDUAL_RECORDS: not written per request
	flagGoodput                          // GOODPUT: exists only when SLOs are set
	flagList                             // one list of values per request (inter_chunk_latency)
	flagInt                              // per-request values are integers in the base unit
	flagBoth                             // computed for failed requests as well (ours: send_lateness)
	flagHTTPTrace                        // HTTP_TRACE_ONLY: from the record's http phases; console only with WriteTraceTiming
)

type kind uint8

const (
	kindRecord    kind = iota // a value per request; summarized with statistics
	kindAggregate             // one value over the run, updated per request
	kindDerived               // one value derived from the others at the end
)

type def struct {
	tag, header string
	unit, disp  unit
	flags       mflag
	kind        kind
	order       int // console display order; 0 = after the ordered ones
}

func (d *def) has(f mflag) bool { return d.flags&f != 0 }

// id indexes defs. Record metrics come first, in the order aiperf computes
// them (its dependency order); this is also the order of a request's
// metrics in profile_export.jsonl and of the metrics that
// profile_export_aiperf.json does not name.
type id int

const (
	mOSL id = iota
	mISL
	mTTFT
	mOutputTokens
	mReasoningTokens
	mTTST
	mLatency
	mTTFO
	mICL
	mPrefillTPS
	mITL
	mOutputTPSUser
	mUsagePrompt
	mUsageCompletion
	mUsageTotal
	mUsageReasoning
	mUsagePromptDiff
	mUsageCompletionDiff
	mUsageReasoningDiff
	mRequestedOSL
	mOSLDiff
	mSendLateness
	mScheduleLatency
	mErrorISL
	mClientLateness
	mCachedTokens
	mCachedPrompt
	mHTTPBlocked
	mHTTPConnReused
	mHTTPConnecting
	mHTTPTLS
	mHTTPDNS
	mHTTPSending
	mHTTPWaiting
	mHTTPReceiving
	mHTTPDuration
	mHTTPDataSent
	mHTTPDataReceived
	mHTTPChunksSent
	mHTTPChunksReceived
	mHTTPConnOverhead
	mHTTPTotal
	mWireSending
	mWireWaiting
	mWireReceiving
	mWireDuration
	mWireDataSent
	mWireDataReceived
	mWireReads
	numRecord // record metrics end here
)

// Aggregates and derived metrics follow the record metrics.
const (
	mRequestCount id = numRecord + iota
	mGoodCount
	mErrorCount
	mOSLMismatchCount
	mUsageDiscrepancyCount
	mITLNearZeroCount
	mMinRequestTS
	mMaxResponseTS
	mBenchDuration
	mRequestThroughput
	mOutputTPS
	mTotalTPS
	mGoodput
	mTotalISL
	mTotalOSL
	mTotalOutputTokens
	mTotalReasoningTokens
	mTotalErrorISL
	mTotalUsagePrompt
	mTotalUsageCompletion
	mTotalUsageTotal
	mTotalCachedTokens
	mCacheHitRate
	numIDs
)

var defs = [numIDs]def{
	mTTFT:                {"time_to_first_token", "Time to First Token", unitNS, unitMS, flagStreaming | flagInt, kindRecord, 100},
	mTTST:                {"time_to_second_token", "Time to Second Token", unitNS, unitMS, flagStreaming | flagInt, kindRecord, 200},
	mTTFO:                {"time_to_first_output_token", "Time to First Output Token", unitNS, unitMS, flagStreaming | flagInt, kindRecord, 210},
	mLatency:             {"request_latency", "Request Latency", unitNS, unitMS, flagInt, kindRecord, 300},
	mITL:                 {"inter_token_latency", "Inter Token Latency", unitNS, unitMS, flagStreaming, kindRecord, 400},
	mICL:                 {"inter_chunk_latency", "Inter Chunk Latency", unitNS, unitMS, flagStreaming | flagNoConsole | flagList | flagInt, kindRecord, 0},
	mOutputTPSUser:       {"output_token_throughput_per_user", "Output Token Throughput Per User", unitUserRate, unitUserRate, flagStreaming | flagLargerIsBetter, kindRecord, 500},
	mPrefillTPS:          {"prefill_throughput_per_user", "Prefill Throughput Per User", unitUserRate, unitUserRate, flagStreaming | flagLargerIsBetter | flagNoConsole, kindRecord, 0},
	mOSL:                 {"output_sequence_length", "Output Sequence Length", unitTokens, unitTokens, flagLargerIsBetter | flagInt, kindRecord, 600},
	mISL:                 {"input_sequence_length", "Input Sequence Length", unitTokens, unitTokens, flagLargerIsBetter | flagInt, kindRecord, 700},
	mOutputTokens:        {"output_token_count", "Output Token Count", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole | flagInt, kindRecord, 0},
	mReasoningTokens:     {"reasoning_token_count", "Reasoning Token Count", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole | flagInt, kindRecord, 0},
	mUsagePrompt:         {"usage_prompt_tokens", "Usage Prompt Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole | flagInt, kindRecord, 0},
	mUsageCompletion:     {"usage_completion_tokens", "Usage Completion Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole | flagInt, kindRecord, 0},
	mUsageTotal:          {"usage_total_tokens", "Usage Total Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole | flagInt, kindRecord, 0},
	mUsageReasoning:      {"usage_reasoning_tokens", "Usage Reasoning Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole | flagInt, kindRecord, 0},
	mUsagePromptDiff:     {"usage_prompt_tokens_diff_pct", "Usage Prompt Diff", unitPercent, unitPercent, flagNoConsole, kindRecord, 0},
	mUsageCompletionDiff: {"usage_completion_tokens_diff_pct", "Usage Completion Diff", unitPercent, unitPercent, flagNoConsole, kindRecord, 0},
	mUsageReasoningDiff:  {"usage_reasoning_tokens_diff_pct", "Usage Reasoning Diff", unitPercent, unitPercent, flagNoConsole, kindRecord, 0},
	mRequestedOSL:        {"requested_osl", "Requested OSL", unitTokens, unitTokens, flagNoConsole | flagInternal | flagInt, kindRecord, 0},
	mOSLDiff:             {"osl_mismatch_diff_pct", "OSL Mismatch Diff %", unitPercent, unitPercent, flagNoConsole, kindRecord, 0},
	mClientLateness:      {"client_lateness", "Client Lateness", unitNS, unitMS, flagInt | flagNoConsole | flagInternal, kindRecord, 0},
	mErrorISL:            {"error_isl", "Error Input Sequence Length", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole | flagErrorOnly | flagInt, kindRecord, 0},
	// Not in aiperf: how late the client sent each request against the
	// schedule, and the latency the user would have seen measured from the
	// intended send time (coordinated omission included).
	mSendLateness:    {"send_lateness", "Send Lateness", unitNS, unitMS, flagInt | flagBoth, kindRecord, 1200},
	mScheduleLatency: {"schedule_relative_latency", "Schedule Relative Latency", unitNS, unitMS, flagInt, kindRecord, 1210},
	// Not in aiperf: the prompt tokens the server served from its prefix
	// cache (usage.prompt_tokens_details.cached_tokens), for the answers
	// that report it, and those answers' usage.prompt_tokens (internal: the
	// denominator of prefix_cache_hit_rate).
	mCachedTokens: {"cached_tokens", "Cached Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole | flagInt, kindRecord, 0},
	mCachedPrompt: {"cached_prompt_tokens", "Cached Prompt Tokens", unitTokens, unitTokens, flagNoConsole | flagInternal | flagInt, kindRecord, 0},
	// aiperf's HTTP trace metrics (k6's names; its
	// src/aiperf/metrics/types/http_trace_metrics.py), from the record's
	// http phases by aiperf's definitions (httptrace.go). connecting holds
	// the TLS handshake, as aiperf's does; tls_handshaking (k6's, not
	// aiperf's) is the handshake alone.
	mHTTPBlocked:        {"http_req_blocked", "HTTP Blocked", unitNS, unitMS, httpFlags, kindRecord, 2000},
	mHTTPDNS:            {"http_req_dns_lookup", "HTTP DNS Lookup", unitNS, unitMS, httpFlags, kindRecord, 2010},
	mHTTPConnecting:     {"http_req_connecting", "HTTP Connecting", unitNS, unitMS, httpFlags, kindRecord, 2020},
	mHTTPTLS:            {"http_req_tls_handshaking", "HTTP TLS Handshaking", unitNS, unitMS, httpFlags, kindRecord, 2025},
	mHTTPSending:        {"http_req_sending", "HTTP Sending", unitNS, unitMS, httpFlags, kindRecord, 2030},
	mHTTPWaiting:        {"http_req_waiting", "HTTP Waiting (TTFB)", unitNS, unitMS, httpFlags, kindRecord, 2040},
	mHTTPReceiving:      {"http_req_receiving", "HTTP Receiving", unitNS, unitMS, httpFlags, kindRecord, 2050},
	mHTTPConnReused:     {"http_req_connection_reused", "HTTP Connection Reused", unitRatio, unitRatio, httpFlags, kindRecord, 2060},
	mHTTPDataSent:       {"http_req_data_sent", "HTTP Data Sent", unitBytes, unitKB, httpFlags, kindRecord, 2070},
	mHTTPChunksSent:     {"http_req_chunks_sent", "HTTP Chunks Sent", unitCount, unitCount, httpFlags, kindRecord, 2080},
	mHTTPDataReceived:   {"http_req_data_received", "HTTP Data Received", unitBytes, unitKB, httpFlags, kindRecord, 2090},
	mHTTPChunksReceived: {"http_req_chunks_received", "HTTP Chunks Received", unitCount, unitCount, httpFlags, kindRecord, 2100},
	mHTTPConnOverhead:   {"http_req_connection_overhead", "HTTP Connection Overhead", unitNS, unitMS, httpFlags, kindRecord, 2110},
	mHTTPDuration:       {"http_req_duration", "HTTP Duration (excl. conn)", unitNS, unitMS, httpFlags, kindRecord, 2120},
	mHTTPTotal:          {"http_req_total", "HTTP Total Time", unitNS, unitMS, httpFlags, kindRecord, 2130},
	// Not in aiperf: the connection's view of the exchange (see
	// httptrace.go), in the run's exports but not per request (results.jsonl
	// holds them).
	mWireSending:      {"http_wire_sending", "HTTP Wire Sending", unitNS, unitMS, wireFlags, kindRecord, 2200},
	mWireWaiting:      {"http_wire_waiting", "HTTP Wire Waiting (first byte)", unitNS, unitMS, wireFlags, kindRecord, 2210},
	mWireReceiving:    {"http_wire_receiving", "HTTP Wire Receiving", unitNS, unitMS, wireFlags, kindRecord, 2220},
	mWireDuration:     {"http_wire_duration", "HTTP Wire Duration", unitNS, unitMS, wireFlags, kindRecord, 2230},
	mWireDataSent:     {"http_wire_data_sent", "HTTP Wire Data Sent", unitBytes, unitKB, wireFlags, kindRecord, 2240},
	mWireDataReceived: {"http_wire_data_received", "HTTP Wire Data Received", unitBytes, unitKB, wireFlags, kindRecord, 2250},
	mWireReads:        {"http_wire_reads", "HTTP Wire Reads", unitCount, unitCount, wireFlags, kindRecord, 2260},

	mRequestCount:          {"request_count", "Request Count", unitRequests, unitRequests, flagLargerIsBetter | flagNoRecord, kindAggregate, 1100},
	mErrorCount:            {"error_request_count", "Error Request Count", unitRequests, unitRequests, flagErrorOnly | flagNoRecord, kindAggregate, 0},
	mGoodCount:             {"good_request_count", "GoodRequestCount", unitRequests, unitRequests, flagGoodput | flagNoConsole | flagInt, kindAggregate, 0},
	mOSLMismatchCount:      {"osl_mismatch_count", "OSL Mismatch Count", unitRequests, unitRequests, flagNoConsole | flagNoRecord, kindAggregate, 0},
	mUsageDiscrepancyCount: {"usage_discrepancy_count", "Usage Discrepancy Count", unitRequests, unitRequests, flagNoConsole | flagNoRecord, kindAggregate, 0},
	// Not in aiperf: requests whose tokens arrived together (see
	// ITLNearZeroNS).
	mITLNearZeroCount: {"itl_near_zero_count", "ITL Near Zero Count", unitRequests, unitRequests, flagStreaming | flagNoConsole | flagNoRecord, kindAggregate, 0},
	mMinRequestTS:     {"min_request_timestamp", "Minimum Request Timestamp", unitNS, unitNS, flagNoConsole | flagNoRecord | flagInternal, kindAggregate, 0},
	mMaxResponseTS:    {"max_response_timestamp", "Maximum Response Timestamp", unitNS, unitNS, flagNoConsole | flagNoRecord | flagInternal, kindAggregate, 0},

	mBenchDuration:        {"benchmark_duration", "Benchmark Duration", unitNS, unitSec, flagNoConsole, kindDerived, 0},
	mRequestThroughput:    {"request_throughput", "Request Throughput", unitReqRate, unitReqRate, flagLargerIsBetter, kindDerived, 900},
	mOutputTPS:            {"output_token_throughput", "Output Token Throughput", unitTokRate, unitTokRate, flagLargerIsBetter, kindDerived, 800},
	mTotalTPS:             {"total_token_throughput", "Total Token Throughput", unitTokRate, unitTokRate, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
	mGoodput:              {"goodput", "Goodput", unitReqRate, unitReqRate, flagGoodput, kindDerived, 1000},
	mTotalISL:             {"total_isl", "Total Input Sequence Length", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
	mTotalOSL:             {"total_osl", "Total Output Sequence Length", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
	mTotalOutputTokens:    {"total_output_tokens", "Total Output Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
	mTotalReasoningTokens: {"total_reasoning_tokens", "Total Reasoning Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
	mTotalErrorISL:        {"total_error_isl", "Total Error Input Sequence Length", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole | flagErrorOnly, kindDerived, 0},
	mTotalUsagePrompt:     {"total_usage_prompt_tokens", "Total Usage Prompt Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
	mTotalUsageCompletion: {"total_usage_completion_tokens", "Total Usage Completion Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
	mTotalUsageTotal:      {"total_usage_total_tokens", "Total Usage Total Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
	// Not in aiperf: Σ cached_tokens and the run's prefix-cache hit rate
	// from the answers, Σ cached_tokens / Σ prompt_tokens over the answers
	// reporting cached_tokens.
	mTotalCachedTokens: {"total_cached_tokens", "Total Cached Tokens", unitTokens, unitTokens, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
	mCacheHitRate:      {"prefix_cache_hit_rate", "Prefix Cache Hit Rate", unitPercent, unitPercent, flagLargerIsBetter | flagNoConsole, kindDerived, 0},
}

// httpFlags are the flags of the http_req_* metrics.
const httpFlags = flagHTTPTrace | flagNoConsole | flagInt

// wireFlags are the flags of the http_wire_* metrics.
const wireFlags = httpFlags | flagNoRecord

var byTag = func() map[string]id {
	m := make(map[string]id, numIDs)
	for i := range defs {
		m[defs[i].tag] = id(i)
	}
	return m
}()

// Info describes one metric as the Python aiperf names it.
type Info struct {
	Tag    string // e.g. "time_to_first_token"
	Header string // e.g. "Time to First Token"
	Unit   string // the display unit, e.g. "ms"
	// PerRequest reports a scalar value per request: a metric a goodput SLO
	// can name.
	PerRequest bool
	// LargerIsBetter makes a goodput SLO on the metric a floor (value >=
	// threshold) rather than a ceiling (value <= threshold).
	LargerIsBetter bool
	// Streaming reports that the metric exists only for streamed responses
	// (Options.Streaming).
	Streaming bool
}

func (i id) info() Info {
	d := &defs[i]
	return Info{
		Tag: d.tag, Header: d.header, Unit: d.disp.tag,
		PerRequest:     d.kind == kindRecord && !d.has(flagList) && !d.has(flagErrorOnly) && !d.has(flagInternal),
		LargerIsBetter: d.has(flagLargerIsBetter),
		Streaming:      d.has(flagStreaming),
	}
}

// Lookup returns the metric with the given aiperf tag.
func Lookup(tag string) (Info, bool) {
	i, ok := byTag[tag]
	if !ok || defs[i].has(flagInternal) {
		return Info{}, false
	}
	return i.info(), true
}

// All lists every exported metric in registry order.
func All() []Info {
	out := make([]Info, 0, numIDs)
	for i := range defs {
		if !defs[i].has(flagInternal) {
			out = append(out, id(i).info())
		}
	}
	return out
}
