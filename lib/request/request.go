// Package request formats OpenAI-compatible request bodies from records, once,
// at pack time. Large values (the prompt string, a messages array) are spliced
// into the body as the already-escaped JSON text they arrived as; nothing is
// decoded and re-encoded.
//
// Key order follows the Python aiperf so bodies can be compared byte for byte:
// chat: messages, model, stream, tools, max_completion_tokens (max_tokens with
// LegacyMaxTokens), then extras merged like dict.update (an existing key keeps
// its place and takes the new value; new keys are appended), then the record's
// own extra, then stream_options when streaming with IncludeUsage.
// completions: prompt, model, stream, max_tokens, extras.
package request

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/record"
)

// Endpoints and their URL paths.
const (
	Chat        = "chat"
	Completions = "completions"
)

// Path returns the URL path of an endpoint type.
func Path(endpoint string) string {
	switch endpoint {
	case Completions:
		return "/v1/completions"
	default:
		return "/v1/chat/completions"
	}
}

// Field is one extra body member: a key and its raw JSON value.
type Field struct {
	Key   string
	Value []byte
}

// Options are the endpoint formatting settings. Every field changes body bytes,
// so every field is part of the cache key (see Options.Describe).
type Options struct {
	Endpoint        string // Chat or Completions
	Model           string
	Streaming       bool
	LegacyMaxTokens bool
	IncludeUsage    bool
	Extra           []Field
}

// ParseExtra turns a --extra argument into fields: "k=v" (v parsed as JSON
// when it is valid JSON, else taken as a string) or a JSON object whose
// members are taken in order.
func ParseExtra(arg string) ([]Field, error) {
	t := strings.TrimSpace(arg)
	if strings.HasPrefix(t, "{") {
		b := []byte(t)
		var out []Field
		end, err := jsonx.Fields(b, 0, func(k, v []byte, _ int) error {
			key, err := jsonx.Unquote(k)
			if err != nil {
				return err
			}
			out = append(out, Field{Key: key, Value: append([]byte(nil), v...)})
			return nil
		})
		if err != nil || jsonx.SkipSpace(b, end) != len(b) {
			return nil, fmt.Errorf("--extra %q: not a valid JSON object", arg)
		}
		return out, nil
	}
	k, v, ok := strings.Cut(arg, "=")
	if !ok || k == "" {
		return nil, fmt.Errorf("--extra %q: want key=value or a JSON object", arg)
	}
	vb := []byte(v)
	if i := jsonx.SkipSpace(vb, 0); i < len(vb) {
		if end, err := jsonx.Skip(vb, i); err == nil && jsonx.SkipSpace(vb, end) == len(vb) {
			return []Field{{Key: k, Value: bytes.TrimSpace(vb)}}, nil
		}
	}
	return []Field{{Key: k, Value: jsonx.AppendString(nil, v)}}, nil
}

// Validate checks the options.
func (o *Options) Validate() error {
	switch o.Endpoint {
	case Chat, Completions:
	default:
		return fmt.Errorf("unknown endpoint %q (want chat or completions)", o.Endpoint)
	}
	return nil
}

// Describe returns the canonical name=value lines of every setting, for cache keys.
func (o *Options) Describe() []string {
	lines := []string{
		"endpoint=" + o.Endpoint,
		"model=" + strconv.Quote(o.Model),
		"streaming=" + strconv.FormatBool(o.Streaming),
		"legacy_max_tokens=" + strconv.FormatBool(o.LegacyMaxTokens),
		"include_usage=" + strconv.FormatBool(o.IncludeUsage),
	}
	for _, f := range o.Extra {
		lines = append(lines, "extra="+strconv.Quote(f.Key)+":"+string(f.Value))
	}
	return lines
}

// Formatter builds bodies. It is not safe for concurrent use (it reuses buffers).
type Formatter struct {
	o      Options
	model  []byte
	fields []member
	num    []byte
}

var (
	trueJSON     = []byte("true")
	falseJSON    = []byte("false")
	includeUsage = []byte(`{"include_usage":true}`)
)

// member is one body member; its value is pre+value+post so a prompt can be
// wrapped into a messages array without copying it.
type member struct {
	key   string
	value []byte
	pre   string
	post  string
}

// NewFormatter validates o and prepares a formatter.
func NewFormatter(o Options) (*Formatter, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Formatter{o: o, model: jsonx.AppendString(nil, o.Model)}, nil
}

// ErrNoModel reports a record that needs formatting without --model.
var ErrNoModel = errors.New("--model is required to format prompt and messages records")

// Append appends the body for rec to dst. Payload records are copied verbatim.
func (f *Formatter) Append(dst []byte, rec *record.Record) ([]byte, error) {
	if rec.Kind == record.KindPayload {
		return append(dst, rec.Raw...), nil
	}
	if f.o.Model == "" {
		return dst, ErrNoModel
	}
	fs := f.fields[:0]
	f.num = strconv.AppendUint(f.num[:0], uint64(rec.MaxTokens), 10)
	switch f.o.Endpoint {
	case Chat:
		if rec.Kind == record.KindPrompt {
			fs = append(fs, member{key: "messages", pre: `[{"role":"user","content":`, value: rec.Raw, post: `}]`})
		} else {
			fs = append(fs, member{key: "messages", value: rec.Raw})
		}
		fs = append(fs, member{key: "model", value: f.model}, member{key: "stream", value: boolJSON(f.o.Streaming)})
		if rec.Tools != nil {
			fs = append(fs, member{key: "tools", value: rec.Tools})
		}
		if rec.HasMaxTokens {
			key := "max_completion_tokens"
			if f.o.LegacyMaxTokens {
				key = "max_tokens"
			}
			fs = append(fs, member{key: key, value: f.num})
		}
	case Completions:
		if rec.Kind != record.KindPrompt {
			return dst, fmt.Errorf("the completions endpoint needs a prompt record, got %s", rec.Kind)
		}
		fs = append(fs, member{key: "prompt", value: rec.Raw}, member{key: "model", value: f.model}, member{key: "stream", value: boolJSON(f.o.Streaming)})
		if rec.HasMaxTokens {
			fs = append(fs, member{key: "max_tokens", value: f.num})
		}
	}
	for _, e := range f.o.Extra {
		fs = update(fs, e.Key, e.Value)
	}
	if rec.Extra != nil {
		var err error
		_, err = jsonx.Fields(rec.Extra, 0, func(k, v []byte, _ int) error {
			key, err := jsonx.Unquote(k)
			if err != nil {
				return err
			}
			fs = update(fs, key, v)
			return nil
		})
		if err != nil {
			return dst, fmt.Errorf("extra: %v", err)
		}
	}
	if f.o.Streaming && f.o.IncludeUsage && !has(fs, "stream_options") {
		fs = append(fs, member{key: "stream_options", value: includeUsage})
	}
	f.fields = fs
	dst = append(dst, '{')
	for i, m := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.pre...)
		dst = append(dst, m.value...)
		dst = append(dst, m.post...)
	}
	return append(dst, '}'), nil
}

func update(fs []member, key string, value []byte) []member {
	for i := range fs {
		if fs[i].key == key {
			fs[i] = member{key: key, value: value}
			return fs
		}
	}
	return append(fs, member{key: key, value: value})
}

func has(fs []member, key string) bool {
	for _, m := range fs {
		if m.key == key {
			return true
		}
	}
	return false
}

func boolJSON(b bool) []byte {
	if b {
		return trueJSON
	}
	return falseJSON
}

// MaxTokensOf returns the first positive integer among a verbatim body's
// max_tokens, max_completion_tokens and max_output_tokens members (aiperf's
// rule for payload records without an explicit max_tokens).
func MaxTokensOf(body []byte) (uint32, bool) {
	var best uint32
	var found bool
	rank := 4
	jsonx.Fields(body, jsonx.SkipSpace(body, 0), func(k, v []byte, _ int) error {
		r := 0
		switch string(k) {
		case `"max_tokens"`:
			r = 1
		case `"max_completion_tokens"`:
			r = 2
		case `"max_output_tokens"`:
			r = 3
		default:
			return nil
		}
		if x, ok := jsonx.ParseUint(v); ok && x > 0 && x <= 1<<32-1 && r < rank {
			best, found, rank = uint32(x), true, r
		}
		return nil
	})
	return best, found
}
