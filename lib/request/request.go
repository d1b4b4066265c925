// Package request formats OpenAI-compatible request bodies from records, once,
// at pack time. Large values (the prompt string, a messages array) are spliced
// into the body as the already-escaped JSON text they arrived as; nothing is
// decoded and re-encoded.
//
// Key order follows the Python aiperf so bodies can be compared byte for byte:
// chat: messages, model, stream, tools, max_completion_tokens (max_tokens with
// LegacyMaxTokens), then extras merged like dict.update (an existing key keeps
// its place and takes the new value; new keys are appended), then the record's
// own extra, then stream_options when streaming (see Options.Usage).
// completions: prompt, model, stream, max_tokens, extras, stream_options.
//
// The completions prompt is one JSON string, never the Python aiperf's list
// of the turn's texts: in the OpenAI API a list prompt is a batch of
// prompts, and servers that take only a string (ollama's OpenAI endpoint)
// refuse a list with 400.
//
// Cache keys trust these bytes: a change to the bodies this package formats
// bumps bodyversion.Version (lib/request/bodyversion; lib/cmd/hashcmd's golden pair fails,
// naming it, otherwise).
package request

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/bodytemplate"
	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/record"
)

// Endpoints and their URL paths.
const (
	Chat        = "chat"
	Completions = "completions"
	// Embeddings, Responses and Messages are formatted in endpoints.go.
	Embeddings = "embeddings"
	Responses  = "responses"
	Messages   = "messages"
	// Raw stores verbatim bodies (payload records only) for a path replay's
	// --path gives.
	Raw = "raw"
	// Template renders each record through a body template (template.go).
	Template = "template"
)

// Endpoints lists the endpoint types, in the order help texts name them.
var Endpoints = []string{Chat, Completions, Embeddings, Responses, Messages, Raw, Template}

// Path returns the URL path of an endpoint type.
func Path(endpoint string) string {
	switch endpoint {
	case Completions:
		return "/v1/completions"
	case Embeddings:
		return "/v1/embeddings"
	case Responses:
		return "/v1/responses"
	case Messages:
		return "/v1/messages"
	case Raw, Template:
		return "" // replay's --path says
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
	// IncludeUsage asks for stream_options.include_usage explicitly. It is
	// the default when streaming (the server's token counts are what replay
	// reports as ISL and OSL), so it only makes a difference to Validate:
	// it needs Streaming and contradicts NoIncludeUsage.
	IncludeUsage bool
	// NoIncludeUsage leaves stream_options.include_usage out of streaming
	// bodies.
	NoIncludeUsage bool
	// PerChunkUsage adds stream_options.continuous_usage_stats (vLLM then
	// reports usage on every chunk). It needs Streaming and usage.
	PerChunkUsage bool
	Extra         []Field
	// Template is the body template of the Template endpoint (and only of
	// it).
	Template *bodytemplate.Template
}

// Usage reports whether streaming bodies carry
// stream_options.include_usage.
// Only chat and completions bodies have stream_options: the other
// endpoints report usage unasked.
func (o *Options) Usage() bool {
	return o.Streaming && !o.NoIncludeUsage && (o.Endpoint == Chat || o.Endpoint == Completions)
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
			return nil, fmt.Errorf("%q: not a valid JSON object", arg)
		}
		return out, nil
	}
	k, v, ok := strings.Cut(arg, "=")
	if !ok || k == "" {
		return nil, fmt.Errorf("%q: want key=value or a JSON object", arg)
	}
	vb := []byte(v)
	if i := jsonx.SkipSpace(vb, 0); i < len(vb) {
		if end, err := jsonx.Skip(vb, i); err == nil && jsonx.SkipSpace(vb, end) == len(vb) {
			return []Field{{Key: k, Value: bytes.TrimSpace(vb)}}, nil
		}
	}
	return []Field{{Key: k, Value: jsonx.AppendString(nil, v)}}, nil
}

// Reserved lists the body members an extra may not set: the store's
// metadata records their value for every formatted body (MetaModel and
// MetaStreaming in lib/pack), and replay trusts it, so a body must not say
// otherwise. They are set by Options.Model and Options.Streaming.
var Reserved = []string{"model", "stream"}

// ErrReserved is wrapped by the errors about an extra that sets a Reserved
// member.
var ErrReserved = errors.New("is set by the endpoint options and recorded in the store's metadata; an extra may not change it")

func reserved(key string) bool {
	for _, r := range Reserved {
		if key == r {
			return true
		}
	}
	return false
}

// FieldError is a problem with one field of a record.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// ErrEndpoint is wrapped by the error about an unknown endpoint type.
var ErrEndpoint = errors.New("unknown endpoint")

// ErrUsage is wrapped by the errors about usage options that contradict
// each other or the streaming setting.
var ErrUsage = errors.New("usage options")

// Validate checks the options.
func (o *Options) Validate() error {
	switch o.Endpoint {
	case Chat, Completions:
	case Embeddings, Responses, Messages, Raw, Template:
		if err := o.validateMore(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w %q (want %s)", ErrEndpoint, o.Endpoint, strings.Join(Endpoints, ", "))
	}
	for _, e := range o.Extra {
		if reserved(e.Key) {
			return fmt.Errorf("extra %q %w", e.Key, ErrReserved)
		}
	}
	if err := o.validateTemplate(); err != nil {
		return err
	}
	switch {
	case o.IncludeUsage && o.NoIncludeUsage:
		return fmt.Errorf("%w: include usage and no include usage contradict each other", ErrUsage)
	case o.IncludeUsage && !o.Streaming:
		return fmt.Errorf("%w: include usage needs streaming (a non-streaming response carries its usage anyway)", ErrUsage)
	case o.PerChunkUsage && !o.Streaming:
		return fmt.Errorf("%w: per-chunk usage needs streaming", ErrUsage)
	case o.PerChunkUsage && o.NoIncludeUsage:
		return fmt.Errorf("%w: per-chunk usage needs include usage (vLLM reports per-chunk usage only with it)", ErrUsage)
	}
	return nil
}

// Describe returns the canonical name=value lines of every setting, for
// cache keys. Settings are described by their effect on the bytes:
// include_usage is the effective value (Usage), so --streaming and
// --streaming --include-usage describe alike, as their bodies are alike.
func (o *Options) Describe() []string {
	lines := []string{
		"endpoint=" + o.Endpoint,
		"model=" + strconv.Quote(o.Model),
		"streaming=" + strconv.FormatBool(o.Streaming),
		"legacy_max_tokens=" + strconv.FormatBool(o.LegacyMaxTokens),
		"include_usage=" + strconv.FormatBool(o.Usage()),
		"per_chunk_usage=" + strconv.FormatBool(o.PerChunkUsage),
	}
	for _, f := range o.Extra {
		lines = append(lines, "extra="+strconv.Quote(f.Key)+":"+string(f.Value))
	}
	if o.Template != nil {
		lines = append(lines, "template=sha256:"+hex.EncodeToString(o.Template.Digest[:]))
	}
	return lines
}

// Formatter builds bodies. It is not safe for concurrent use (it reuses buffers).
type Formatter struct {
	o       Options
	model   []byte
	fields  []member
	num     []byte
	scratch []byte
	spans   []span
	parts   [][]byte
	runs    []Run
	so      []byte // the stream_options value being built
	batch   []byte // the input array of an embeddings batch
	tmpl    []byte // a rendered template body
	capNum  []byte // a payload's overridden cap (capPayload)
	capIns  []byte // the cap member added to a payload without one
}

var (
	trueJSON  = []byte("true")
	falseJSON = []byte("false")
)

// The stream_options members the formatter adds, in this order.
const (
	includeUsageKey  = "include_usage"
	perChunkUsageKey = "continuous_usage_stats"
)

// member is one body member; its value is pre+value+post so a prompt can be
// wrapped into a messages array without copying it.
type member struct {
	key    string
	value  []byte
	pre    string
	post   string
	pieces []record.Piece // a block-form messages array, instead of value
}

// NewFormatter validates o and prepares a formatter.
func NewFormatter(o Options) (*Formatter, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Formatter{o: o, model: jsonx.AppendString(nil, o.Model)}, nil
}

// ErrNoModel reports a record that needs formatting while Options.Model is
// empty.
var ErrNoModel = errors.New("a model name is required to format prompt and messages records")

// Body is one formatted request body: Parts written back to back, Len bytes
// in all. The parts alias the record and the Formatter's buffers: a Body is
// valid until the record changes or the next Format call. Large values (a
// prompt, a messages array) are parts of their own, never copied.
type Body struct {
	Parts [][]byte
	Len   int
	// MaxTokens is the body's output-token limit, HasMaxTokens whether it
	// has one: the record's max_tokens, unless an extra set one of the
	// max-token members, in which case it is read from the body by
	// MaxTokensOf's rule, as for a verbatim payload.
	MaxTokens    uint32
	HasMaxTokens bool
	// Runs are the body's runs of blocks (a block-form record's): the
	// part Parts[r.Part] of each is nil, and stands for the text of
	// blocks First..First+N-1, Len bytes (counted in Len).
	Runs []Run
}

// Run is a run of consecutive blocks in a body (see Body.Runs).
type Run struct {
	Part     int
	First, N uint32
	Len      int
}

// inlineMax is the largest value copied into the Formatter's scratch
// buffer; larger ones become parts of their own.
const inlineMax = 512

// Format builds the body for rec. Payload records are their own body,
// verbatim.
func (f *Formatter) Format(rec *record.Record) (Body, error) {
	if rec.Kind == record.KindBlockMessages && f.o.Endpoint != Chat && f.o.Endpoint != Messages {
		return Body{}, &FieldError{Field: "block_messages", Err: fmt.Errorf("the %s endpoint does not take messages in the block form (chat and messages do)", f.o.Endpoint)}
	}
	if f.o.Endpoint == Template {
		return f.formatTemplate(rec)
	}
	if rec.Kind == record.KindPayload {
		// The row's output length (or --max-osl) is the body's cap, as in
		// aiperf; without one, the body's own.
		b := Body{Parts: append(f.parts[:0], rec.Raw), MaxTokens: rec.MaxTokens, HasMaxTokens: rec.HasMaxTokens && rec.MaxTokens > 0 && f.o.Endpoint != Embeddings}
		if b.HasMaxTokens {
			b.Parts = f.capPayload(b.Parts[:0], rec.Raw, rec.MaxTokens)
		} else {
			b.MaxTokens, b.HasMaxTokens = MaxTokensOf(rec.Raw)
		}
		for _, p := range b.Parts {
			b.Len += len(p)
		}
		f.parts = b.Parts
		return b, nil
	}
	fs, maxSet, err := f.members(rec)
	if err != nil {
		return Body{}, err
	}
	b := f.assemble(fs)
	b.MaxTokens, b.HasMaxTokens = f.bodyMaxTokens(rec)
	if maxSet {
		b.MaxTokens, b.HasMaxTokens = maxTokensOfMembers(fs)
	}
	return b, nil
}

// Append appends the body for rec to dst.
func (f *Formatter) Append(dst []byte, rec *record.Record) ([]byte, error) {
	b, err := f.Format(rec)
	if err != nil {
		return dst, err
	}
	for _, p := range b.Parts {
		dst = append(dst, p...)
	}
	return dst, nil
}

// members lists the body members of a prompt or messages record in order.
// maxSet reports that an extra set a max-token member.
func (f *Formatter) members(rec *record.Record) (fs []member, maxSet bool, err error) {
	if f.o.Model == "" {
		return nil, false, ErrNoModel
	}
	fs = f.fields[:0]
	f.num = strconv.AppendUint(f.num[:0], uint64(rec.MaxTokens), 10)
	switch f.o.Endpoint {
	case Chat:
		fs = append(fs, messagesMember(rec))
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
			return nil, false, fmt.Errorf("the completions endpoint needs a prompt record, got %s", rec.Kind)
		}
		fs = append(fs, member{key: "prompt", value: rec.Raw}, member{key: "model", value: f.model}, member{key: "stream", value: boolJSON(f.o.Streaming)})
		if rec.HasMaxTokens && rec.MaxTokens > 0 { // aiperf's completions sends a falsy cap not at all
			fs = append(fs, member{key: "max_tokens", value: f.num})
		}
	default:
		if fs, err = f.moreMembers(fs, rec); err != nil {
			return nil, false, err
		}
	}
	if fs, maxSet, err = f.extras(fs, rec); err != nil {
		return nil, false, err
	}
	if f.o.Usage() {
		fs = f.streamOptions(fs)
	}
	f.fields = fs
	return fs, maxSet, nil
}

// messagesMember is the messages member of a prompt, messages or
// block-form record.
func messagesMember(rec *record.Record) member {
	switch rec.Kind {
	case record.KindPrompt:
		return member{key: "messages", pre: `[{"role":"user","content":`, value: rec.Raw, post: `}]`}
	case record.KindBlockMessages:
		return member{key: "messages", pieces: rec.Pieces}
	}
	return member{key: "messages", value: rec.Raw}
}

// extras sets the members of --extra, then the record's extra, over fs
// (a later value replaces an earlier member of the same name in place);
// maxSet reports that one of them set a max-token member. A reserved name
// in the record's extra is refused.
func (f *Formatter) extras(fs []member, rec *record.Record) (_ []member, maxSet bool, err error) {
	for _, e := range f.o.Extra {
		fs = update(fs, e.Key, e.Value)
		maxSet = maxSet || maxTokenRank(e.Key) > 0
	}
	if rec.Extra == nil {
		return fs, maxSet, nil
	}
	_, err = jsonx.Fields(rec.Extra, 0, func(k, v []byte, _ int) error {
		key, err := jsonx.Unquote(k)
		if err != nil {
			return err
		}
		if reserved(key) {
			return fmt.Errorf("member %q %w", key, ErrReserved)
		}
		fs = update(fs, key, v)
		maxSet = maxSet || maxTokenRank(key) > 0
		return nil
	})
	if err != nil {
		return nil, false, &FieldError{Field: "extra", Err: err}
	}
	return fs, maxSet, nil
}

// streamOptions adds include_usage (and with PerChunkUsage
// continuous_usage_stats) to the body's stream_options, as the Python
// aiperf does: an object from an extra keeps its members, in order, and
// gains the missing ones after them, so a member the user set, false
// included, wins; a stream_options that is not an object is replaced; a
// body without one gets a new one at the end.
func (f *Formatter) streamOptions(fs []member) []member {
	var user []byte
	for _, m := range fs {
		if m.key == "stream_options" {
			user = m.value
		}
	}
	var haveUsage, haveChunk bool
	so := f.so[:0]
	if i := jsonx.SkipSpace(user, 0); i < len(user) && user[i] == '{' {
		end, err := jsonx.Fields(user, i, func(k, _ []byte, _ int) error {
			switch string(k) {
			case `"` + includeUsageKey + `"`:
				haveUsage = true
			case `"` + perChunkUsageKey + `"`:
				haveChunk = true
			}
			return nil
		})
		if err == nil {
			so = append(so, user[:end-1]...) // the object without its closing brace
		}
	}
	if len(so) == 0 {
		so = append(so, '{')
	}
	sep := func() {
		if j := len(bytes.TrimRight(so, " \t\r\n")); so[j-1] != '{' {
			so = append(so, ',')
		}
	}
	if !haveUsage {
		sep()
		so = append(so, `"`+includeUsageKey+`":true`...)
	}
	if f.o.PerChunkUsage && !haveChunk {
		sep()
		so = append(so, `"`+perChunkUsageKey+`":true`...)
	}
	so = append(so, '}')
	f.so = so
	return update(fs, "stream_options", so)
}

// assemble lays the members out as parts: keys, punctuation and small
// values go to the scratch buffer, large values are parts of their own.
func (f *Formatter) assemble(fs []member) Body {
	sc := f.scratch[:0]
	spans := f.spans[:0]
	mark := 0 // start of the scratch bytes not yet in a span
	flush := func() {
		if len(sc) > mark {
			spans = append(spans, span{from: mark, to: len(sc)})
			mark = len(sc)
		}
	}
	sc = append(sc, '{')
	for i, m := range fs {
		if i > 0 {
			sc = append(sc, ',')
		}
		sc = jsonx.AppendString(sc, m.key)
		sc = append(sc, ':')
		sc = append(sc, m.pre...)
		if m.pieces != nil {
			for _, p := range m.pieces {
				switch {
				case p.N > 0:
					flush()
					spans = append(spans, span{run: true, first: p.First, n: p.N, len: p.Len})
				case len(p.Lit) <= inlineMax:
					sc = append(sc, p.Lit...)
				default:
					flush()
					spans = append(spans, span{ext: p.Lit})
				}
			}
		} else if len(m.value) <= inlineMax {
			sc = append(sc, m.value...)
		} else {
			flush()
			spans = append(spans, span{ext: m.value})
		}
		sc = append(sc, m.post...)
	}
	sc = append(sc, '}')
	flush()
	b := Body{Parts: f.parts[:0], Runs: f.runs[:0]}
	for _, s := range spans {
		if s.run {
			b.Runs = append(b.Runs, Run{Part: len(b.Parts), First: s.first, N: s.n, Len: s.len})
			b.Parts = append(b.Parts, nil)
			b.Len += s.len
			continue
		}
		p := s.ext
		if p == nil {
			p = sc[s.from:s.to]
		}
		b.Parts = append(b.Parts, p)
		b.Len += len(p)
	}
	f.scratch, f.spans, f.parts, f.runs = sc, spans, b.Parts, b.Runs
	if len(b.Runs) == 0 {
		b.Runs = nil
	}
	return b
}

// span is a part of a body: ext, or scratch[from:to] when ext is nil, or
// a run of blocks.
type span struct {
	ext      []byte
	from, to int
	run      bool
	first, n uint32
	len      int
}

// maxTokenRank orders the max-token members as MaxTokensOf reads them; 0
// for other keys.
func maxTokenRank(key string) int {
	switch key {
	case "max_tokens":
		return 1
	case "max_completion_tokens":
		return 2
	case "max_output_tokens":
		return 3
	}
	return 0
}

// maxTokensOfMembers applies MaxTokensOf's rule to a member list.
func maxTokensOfMembers(fs []member) (uint32, bool) {
	var best uint32
	var found bool
	rank := 4
	for _, m := range fs {
		r := maxTokenRank(m.key)
		if r == 0 || r >= rank {
			continue
		}
		if x, ok := jsonx.ParseUint(m.value); ok && x > 0 && x <= 1<<32-1 {
			best, found, rank = uint32(x), true, r
		}
	}
	return best, found
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
