package trace

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Detect names the format of a trace from its first non-blank record: a
// JSONL line, a BurstGPT CSV header line, or a whole inputs_json document.
// The rules follow aiperf's loader probes:
//
//   - requests, block_size and hash_id_scope: weka_trace (a whole file on
//     one line; a pretty-printed one is read whole, as inputs_json)
//   - captureData: sagemaker_data_capture
//   - chat_id: bailian_trace
//   - turns: multi_turn
//   - data, a list whose first item has payloads: inputs_json
//   - input_length, text_input or payload: mooncake_trace
//   - messages with a Mooncake key (timestamp, delay, session_id,
//     output_length, hash_ids, extra, message_mode, context_mode):
//     mooncake_trace
//   - a messages list, without conversation_id: raw_payload
//   - text(s), image(s), audio(s) or video(s): single_turn
//   - a CSV header with Timestamp, Request tokens and Response tokens:
//     burst_gpt_trace
//
// Anything else is an error. A pretty-printed inputs_json file cannot be
// detected from its first line; [Open] and [NewReader] then try the whole
// document.
func Detect(first []byte) (string, error) {
	b := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(first), []byte("\xEF\xBB\xBF")))
	if len(b) == 0 {
		return "", errors.New("empty record: cannot detect the trace type")
	}
	if b[0] != '{' {
		if isBurstHeader(b) {
			return TypeBurstGPT, nil
		}
		return "", errors.New("cannot detect the trace type: the first record is neither a JSON object nor a BurstGPT CSV header (Timestamp, Request tokens, Response tokens)")
	}
	if !validJSON(b) {
		msg, _ := syntaxError(b)
		return "", fmt.Errorf("cannot detect the trace type: %s", msg)
	}
	fields := map[string][]byte{}
	var keys []string
	_ = members(b, func(k string, v []byte, _ int) error {
		if _, dup := fields[k]; !dup {
			keys = append(keys, k)
		}
		fields[k] = v
		return nil
	})
	has := func(k string) bool { _, ok := fields[k]; return ok }
	switch {
	case has("requests") && has("block_size") && has("hash_id_scope"):
		return TypeWeka, nil
	case has("captureData"):
		return TypeSageMaker, nil
	case has("chat_id"):
		return TypeBailian, nil
	case has("turns"):
		return TypeMultiTurn, nil
	case isInputsJSON(b):
		return TypeInputsJSON, nil
	case has("input_length") || has("text_input") || has("payload"):
		return TypeMooncake, nil
	case has("messages"):
		for _, k := range []string{"timestamp", "delay", "session_id", "output_length", "hash_ids", "extra", "message_mode", "context_mode"} {
			if has(k) {
				return TypeMooncake, nil
			}
		}
		if kind(fields["messages"]) == kindArray && !has("conversation_id") && kind(fields["data"]) != kindArray {
			return TypeRawPayload, nil
		}
	}
	for _, k := range []string{"text", "texts", "image", "images", "audio", "audios", "video", "videos"} {
		if has(k) {
			return TypeSingleTurn, nil
		}
	}
	if len(keys) > 8 {
		keys = append(keys[:8], "...")
	}
	return "", fmt.Errorf("cannot detect the trace type from the first record (keys: %s); pass it explicitly", strings.Join(keys, ", "))
}

// burstColumns are the columns aiperf requires in a BurstGPT CSV.
var burstColumns = []string{"Timestamp", "Request tokens", "Response tokens"}

func isBurstHeader(line []byte) bool {
	cr := csv.NewReader(bytes.NewReader(line))
	cr.LazyQuotes = true
	header, err := cr.Read()
	if err != nil {
		return false
	}
	for _, c := range burstColumns {
		if !slices.Contains(header, c) {
			return false
		}
	}
	return true
}

// isInputsJSON reports whether doc is a JSON object whose "data" is a
// non-empty list and whose first item has a "payloads" list (aiperf's probe).
func isInputsJSON(doc []byte) bool {
	if len(doc) == 0 || doc[0] != '{' || !validJSON(doc) {
		return false
	}
	data := member(doc, "data")
	if kind(data) != kindArray {
		return false
	}
	ok := false
	_ = elements(data, func(i int, e []byte, _ int) error {
		ok = kind(e) == kindObject && kind(member(e, "payloads")) == kindArray
		return errStop
	})
	return ok
}

var errStop = errors.New("stop")
