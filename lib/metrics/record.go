package metrics

import (
	"github.com/aiperf/toolkit/lib/result"
)

// Thresholds aiperf reads from its environment, at their defaults.
const (
	// usagePctThreshold flags a request whose server usage differs from the
	// client's count by more than this percentage
	// (AIPERF_METRICS_USAGE_PCT_DIFF_THRESHOLD).
	usagePctThreshold = 10.0
	// oslMismatchPct and oslMismatchMaxTokens: a request's output length
	// mismatches the requested max tokens when they differ by more than
	// min(requested * 5 %, 50 tokens)
	// (AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD, ..._MAX_TOKEN_THRESHOLD).
	oslMismatchPct       = 5.0
	oslMismatchMaxTokens = 50
)

// ITLNearZeroNS: a request whose inter_token_latency is below this (10 µs,
// an output_token_throughput_per_user above 100,000 tokens/s) had its tokens
// after the first arrive together with it: in the same network read as the
// first, or sent by the server in one chunk or one flush. No server
// generates tokens that fast for one user, so such a request's ITL measures
// how the tokens were delivered, not how fast they were generated, and its
// throughput per user (up to millions of tokens/s) lifts the average far
// above the median. aiperf's definitions stand (ITL = (request_latency -
// TTFT) / (OSL - 1)); itl_near_zero_count says how many requests are such.
const ITLNearZeroNS = 10_000

// invalidError is the error aiperf gives a request that returned no content
// (InvalidInferenceResultError; it carries no code).
var invalidError = result.Error{
	Type:    "InvalidInferenceResultError",
	Message: "Invalid inference result: no responses with actual content were received from the server",
}

// values are one request's metrics, in base units.
type values struct {
	valid bool   // a successful request with content; else an error record
	has   uint64 // bit i: record metric i has a value
	v     [numRecord]float64
	icl   []int64 // chunk offsets, when inter_chunk_latency has values

	err *result.Error // the error of an error record

	good, oslMismatch, usageDisc int8 // aggregate counters: -1 = no value, else 0 or 1

	startNS, maxRespNS int64 // request start and last content response (valid records)
}

func (x *values) set(i id, v float64) {
	x.v[i] = v
	x.has |= 1 << i
}

func (x *values) ok(i id) bool { return x.has&(1<<i) != 0 }

// evaluator computes a request's metrics under one set of options.
type evaluator struct {
	streaming bool
	slos      []slo
	// noTokens is set from the run info of the records (a run's first
	// record carries it): the run's endpoint produces no tokens.
	noTokens bool
}

// producesTokens reports whether an endpoint's answers hold output tokens:
// not an embeddings answer, whose endpoint the Python aiperf describes
// with produces_tokens false, so that it computes none of its metrics
// flagged PRODUCES_TOKENS_ONLY (output_sequence_length, output_token_count,
// reasoning_token_count, usage_completion_tokens, usage_total_tokens,
// usage_reasoning_tokens, their totals, output_token_throughput, and
// total_token_throughput, which needs total_osl). The ISL and
// usage_prompt_tokens (TOKENIZES_INPUT_ONLY) stay.
func producesTokens(endpoint string) bool { return endpoint != "embeddings" }

// note reads the run info a record carries (the first of a run), before
// the record is skipped as warmup or evaluated: what a run's records are
// is said once, at their start.
func (e *evaluator) note(r *result.Record) {
	if r.Run != nil {
		e.noTokens = !producesTokens(r.Run.Endpoint)
	}
}

// eval computes r's metrics into x, following the Python aiperf's
// definitions (its metric names in parentheses):
//
//   - content responses are r.ChunkOffsetsNS; a request without an error and
//     with at least one is valid, any other is an error record (one without
//     an error of its own gets InvalidInferenceResultError);
//   - the request start is r.StartNS(), aiperf's: before the connection was
//     taken from the pool or dialled, so a request that opened its
//     connection has the dial in its latencies (the record's SentNS, and
//     its chunk offsets, are from when it had the connection);
//   - request_latency = last content response - request start;
//   - time_to_first_token = first content response - start, time_to_second_token
//     = second - first, time_to_first_output_token = first non-reasoning
//     content - start, inter_chunk_latency = the gaps between content
//     responses (streaming only);
//   - input_sequence_length = usage.prompt_tokens when the server sent one,
//     else the store's input_tokens; output_sequence_length = output +
//     reasoning tokens; inter_token_latency = (request_latency - TTFT) /
//     (OSL - 1) for OSL >= 2; output_token_throughput_per_user = 1 / ITL in
//     seconds; prefill_throughput_per_user = ISL / TTFT in seconds;
//   - usage_*_tokens are the server's usage; usage_*_diff_pct = |server -
//     client| / client * 100, where the client's prompt count is the store's
//     input_tokens and its output count the client tokenizer's (r.OutputTokens
//     when counted by the client, else r.ClientOutputTokens, which replay
//     counts beside usage when it has a tokenizer);
//   - osl_mismatch_diff_pct = (OSL - max_tokens) / max_tokens * 100;
//   - usage_discrepancy_count counts a request when any of the diffs it has
//     exceeds 10 %; aiperf counts only requests that have both the prompt
//     and the completion diff, which a replay without a client tokenizer
//     (--tokenizer none) never has;
//   - send_lateness = sent - intended (every request), schedule_relative_latency
//     = end - intended (valid requests): the latency measured from when the
//     schedule meant the request to go, so a client that falls behind cannot
//     hide the wait (coordinated omission); client_lateness (internal,
//     for the fell-behind rule) = send_lateness - ceiling_wait_ns, the part
//     of the lateness that was not a wait for a --concurrency slot.
func (e *evaluator) eval(r *result.Record, x *values) {
	*x = values{good: -1, oslMismatch: -1, usageDisc: -1}
	c := r.ChunkOffsetsNS
	x.valid = r.Err == nil && len(c) > 0
	if r.IntendedNS > 0 && r.SentNS > 0 {
		x.set(mSendLateness, float64(r.SentNS-r.IntendedNS))
		x.set(mClientLateness, float64(max(r.SentNS-r.IntendedNS-r.CeilingWaitNS, 0)))
	}
	isl, haveISL := int64(0), false
	if u := r.Usage; u != nil && u.PromptTokens > 0 {
		isl, haveISL = u.PromptTokens, true
	} else if r.InputTokens > 0 {
		isl, haveISL = r.InputTokens, true
	}
	if !x.valid {
		x.err = r.Err
		if x.err == nil {
			x.err = &invalidError
		}
		if haveISL {
			x.set(mErrorISL, float64(isl))
		}
		return
	}

	start := r.StartNS()
	dial := r.SentNS - start // the connection's overhead, before SentNS
	latency := c[len(c)-1] + dial
	x.set(mLatency, float64(latency))
	x.setHTTP(r.HTTP)
	x.startNS, x.maxRespNS = start, start+latency
	if r.IntendedNS > 0 && r.EndNS >= r.IntendedNS {
		x.set(mScheduleLatency, float64(r.EndNS-r.IntendedNS))
	}
	if haveISL {
		x.set(mISL, float64(isl))
	}
	osl, haveOSL := int64(0), r.OutputSource != "" && !e.noTokens
	if haveOSL {
		osl = r.OutputTokens + r.ReasoningTokens
		x.set(mOSL, float64(osl))
		if r.OutputTokens > 0 {
			x.set(mOutputTokens, float64(r.OutputTokens))
		}
		if r.ReasoningTokens > 0 {
			x.set(mReasoningTokens, float64(r.ReasoningTokens))
		}
	}

	if e.streaming {
		ttft := c[0] + dial
		x.set(mTTFT, float64(ttft))
		if len(c) >= 2 {
			if d := c[1] - c[0]; d >= 0 {
				x.set(mTTST, float64(d))
			}
			monotone := true
			for i := 1; i < len(c); i++ {
				if c[i] < c[i-1] {
					monotone = false
					break
				}
			}
			if monotone {
				x.icl = c
			}
		}
		if r.FirstOutputNS > 0 && r.FirstOutputNS >= r.SentNS {
			x.set(mTTFO, float64(r.FirstOutputNS-start))
		}
		if haveISL && ttft != 0 {
			x.set(mPrefillTPS, float64(isl)/(float64(ttft)*convFactor(unitNS, unitSec)))
		}
		if haveOSL && osl >= 2 {
			itl := float64(latency-ttft) / float64(osl-1)
			x.set(mITL, itl)
			if sec := itl * convFactor(unitNS, unitSec); sec != 0 {
				x.set(mOutputTPSUser, 1/sec)
			}
		}
	}

	if u := r.Usage; u != nil {
		x.set(mUsagePrompt, float64(u.PromptTokens))
		if !e.noTokens {
			x.set(mUsageCompletion, float64(u.CompletionTokens))
			x.set(mUsageTotal, float64(u.TotalTokens))
		}
		if u.ReasoningTokens > 0 && !e.noTokens {
			x.set(mUsageReasoning, float64(u.ReasoningTokens))
		}
		if u.HasCached {
			x.set(mCachedTokens, float64(u.CachedTokens))
			x.set(mCachedPrompt, float64(u.PromptTokens))
		}
		disc := int8(-1)
		check := func(i id, server, client int64) {
			if client <= 0 {
				return
			}
			d := float64(abs(server-client)) / float64(client) * 100.0
			x.set(i, d)
			if disc < 0 {
				disc = 0
			}
			if d > usagePctThreshold {
				disc = 1
			}
		}
		check(mUsagePromptDiff, u.PromptTokens, r.InputTokens)
		switch {
		case e.noTokens:
			disc = -1 // aiperf's count needs the completion diff too
		case r.OutputSource == result.SourceClient:
			check(mUsageCompletionDiff, u.CompletionTokens, r.OutputTokens+r.ReasoningTokens)
			if u.ReasoningTokens > 0 {
				check(mUsageReasoningDiff, u.ReasoningTokens, r.ReasoningTokens)
			}
		case r.ClientCounted:
			check(mUsageCompletionDiff, u.CompletionTokens, r.ClientOutputTokens+r.ClientReasoningTokens)
			if u.ReasoningTokens > 0 {
				check(mUsageReasoningDiff, u.ReasoningTokens, r.ClientReasoningTokens)
			}
		}
		x.usageDisc = disc
	}

	if r.MaxTokens > 0 {
		req := r.MaxTokens
		x.set(mRequestedOSL, float64(req))
		if haveOSL {
			x.set(mOSLDiff, float64(osl-req)/float64(req)*100.0)
			threshold := min(float64(req)*(oslMismatchPct/100), oslMismatchMaxTokens)
			x.oslMismatch = 0
			if float64(abs(osl-req)) > threshold {
				x.oslMismatch = 1
			}
		}
	}

	if len(e.slos) > 0 {
		x.good = 1
		for _, s := range e.slos {
			if !x.ok(s.id) || !s.pass(x.v[s.id]) {
				x.good = 0
				break
			}
		}
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
