package replaycmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
)

// defaultMaxErrorRate is the error-rate gate of a run given no
// --max-error-rate. The Python aiperf has none (it exits 0 whatever
// failed, and CI jobs wrap it in a check of their own); a run where more
// than one request in ten failed measured mostly the failures (its
// latencies describe the minority that succeeded), and one where every
// request failed measured nothing. The default gate leaves out the
// cancellations the client made itself (--cancel-rate, the grace's end),
// which are no failure of the server; --max-error-rate PCT counts them, as
// error_request_count does, and --max-error-rate 100 never fails a run.
const defaultMaxErrorRate = 0.10

// cancellationType is the error type of a request the client cancelled.
const cancellationType = "RequestCancellationError"

// judgeErrors judges the run's error rate against --max-error-rate
// (maxErr; negative when not given: defaultMaxErrorRate), and when it is
// exceeded says so loudly on w, quiet or not: how many failed, the most
// frequent error, and for a 404 the models the server's /v1/models lists.
func judgeErrors(w io.Writer, fin *finished, maxErr float64) error {
	sum := fin.sum
	explicit := maxErr >= 0
	failed, judged := sum.ErrorRequests, sum.Requests+sum.ErrorRequests
	if !explicit {
		maxErr = defaultMaxErrorRate
		failed, judged = failed-sum.Cancelled, judged-sum.Cancelled
	}
	if judged == 0 {
		if explicit {
			return base.No("no profiling requests: --max-error-rate has nothing to judge")
		}
		return nil
	}
	rate := float64(failed) / float64(judged)
	if rate <= maxErr {
		return nil
	}
	what := fmt.Sprintf("%d of %d requests failed", failed, judged)
	if failed == judged {
		what = fmt.Sprintf("every request failed (%d of %d)", failed, judged)
	}
	if e, ok := topError(sum, !explicit); ok {
		what += "; the most frequent error (" + strconv.FormatInt(e.Count, 10) + "): " + describeError(e)
	}
	fmt.Fprintf(w, "aiperf-replay: FAILED: %s\n", what)
	if i := slices.IndexFunc(sum.Errors, func(e metrics.ErrorCount) bool { return e.Code == 404 }); i >= 0 && fin.plan != nil {
		fmt.Fprintf(w, "aiperf-replay: %s\n", notFoundHint(fin.plan, sum.Errors[i].Message))
	}
	if !explicit {
		return base.No("error rate %.2f%% exceeds --max-error-rate %.2f%% (the default; --max-error-rate 100 never fails a run)", 100*rate, 100*maxErr)
	}
	return base.No("error rate %.2f%% exceeds --max-error-rate %.2f%%", 100*rate, 100*maxErr)
}

// topError is the most frequent error (sum.Errors is sorted so), the
// client's cancellations left out with noCancel.
func topError(sum *metrics.Summary, noCancel bool) (metrics.ErrorCount, bool) {
	for _, e := range sum.Errors {
		if !noCancel || e.Type != cancellationType {
			return e, true
		}
	}
	return metrics.ErrorCount{}, false
}

// describeError is an error on one line: code, type, and the message an
// OpenAI-style error body holds ({"error":{"message":...}}, {"error":"..."},
// {"message":...}; vLLM's, ollama's and aiperf-mock's), else the body cut
// short.
func describeError(e metrics.ErrorCount) string {
	msg := e.Message
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal([]byte(msg), &body) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			msg = s
		case body.Message != "":
			msg = body.Message
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:199]) + "…"
	}
	head := e.Type
	if e.Code != 0 {
		head = strconv.Itoa(e.Code) + " " + e.Type
	}
	return head + ": " + msg
}

// notFoundHint names what the server serves after requests got a 404
// whose body is msg: its /v1/models (fetched once, from the run's target
// alone, within replay.ModelsTimeout) beside the model the store's bodies
// name, when the body speaks of a model (vLLM: "The model `x` does not
// exist.", ollama: "model \"x\" not found"); else the path is the likely
// cause.
func notFoundHint(p *replay.Plan, msg string) string {
	models, err := replay.ListModels(context.Background(), p.Options)
	listed := "lists no model"
	switch {
	case err != nil:
		listed = "could not be read: " + err.Error()
	case len(models) > 0:
		listed = "lists: " + strings.Join(models, ", ")
	}
	switch {
	case !strings.Contains(strings.ToLower(msg), "model"):
		return fmt.Sprintf("requests got 404 Not Found, and not for a model: check the request path (--url, --endpoint, --path); the server's /v1/models %s", listed)
	case p.Model == "":
		return fmt.Sprintf("requests got 404 Not Found for a model; the server's /v1/models %s (the store's bodies name no one model)", listed)
	case slices.Contains(models, p.Model):
		return fmt.Sprintf("requests got 404 Not Found for a model, yet the server's /v1/models %s, the store's %q among them", listed, p.Model)
	}
	return fmt.Sprintf("requests got 404 Not Found: the store's bodies name model %q, and the server's /v1/models %s (repack the store with aiperf-pack --model NAME)", p.Model, listed)
}
