// Package stagekey holds the settings of aiperf-tokenize and aiperf-pack that
// shape output bytes, their flag definitions and the checks that turn them
// into stage options, in one place that the stages and aiperf-hash all
// import: a cache key is built from the very definitions the stages parse,
// so the two cannot drift apart.
//
// It also defines the stages' other flags (the ones that cannot change a
// byte of the store: outputs, verification, limits, verbosity), so that
// `aiperf-hash key` accepts a stage's command line as it is, and lists them
// in [Excluded] with the reason each is left out of the key. A stage flag
// defined anywhere else is unclassified, and the classification test in
// lib/cmd/hashcmd fails until it is moved here.
//
// aiperf-tokenize's half (its settings read traces) is the subpackage
// tokenizekey, so that aiperf-pack, which imports this one, links no
// trace parser (the root's TestLeanBinaries checks it).
//
// The package links neither the tokenizer, the synthesis, the store writer
// nor the pack pipeline (lib/cmd/hashcmd's TestDeps checks it): aiperf-hash
// must stay small and start fast.
package stagekey

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/urfave/cli/v2"
)

// Stage names, as the binaries call themselves.
const (
	TokenizeStage = "aiperf-tokenize"
	PackStage     = "aiperf-pack"
)

// Field is one setting of a cache key: a name ("tokenize.seed") and its
// canonical value.
type Field struct {
	Name   string
	Value  string
	List   []string // for a field whose value is a list (Value is then "")
	IsList bool
}

// Pack are the aiperf-pack settings that shape the store's bytes.
type Pack struct {
	Request  request.Options // Extra is filled by Check from ExtraArgs
	Extra    cli.StringSlice
	Compress bool
	// TemplateFile is --template's file: its bytes are keyed (through
	// request.Options.Template's digest), never its name.
	TemplateFile string
}

// PackFlags returns the flags of aiperf-pack that shape the store, bound to
// p.
func PackFlags(p *Pack) []cli.Flag {
	o := &p.Request
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "model `NAME` written into every formatted body", Destination: &o.Model},
		&cli.StringFlag{Name: "endpoint", Value: request.Chat, Usage: "endpoint `TYPE`: chat (/v1/chat/completions), completions (/v1/completions), embeddings (/v1/embeddings), responses (/v1/responses), messages (Anthropic, /v1/messages), raw (payload records only, sent to replay's --path) or template (bodies rendered from --template, sent to replay's --path)", Destination: &o.Endpoint},
		&cli.BoolFlag{Name: "streaming", Usage: `set "stream": true (server-sent events)`, Destination: &o.Streaming},
		&cli.BoolFlag{Name: "legacy-max-tokens", Usage: "chat: write max_tokens instead of max_completion_tokens", Destination: &o.LegacyMaxTokens},
		&cli.BoolFlag{Name: "include-usage", Usage: `with --streaming (where it is the default): "stream_options":{"include_usage":true}, added to a stream_options from --extra unless that sets it`, Destination: &o.IncludeUsage},
		&cli.BoolFlag{Name: "no-include-usage", Usage: "with --streaming: leave stream_options.include_usage out (the server then reports no token counts)", Destination: &o.NoIncludeUsage},
		&cli.BoolFlag{Name: "per-chunk-usage", Usage: `with --streaming: also "continuous_usage_stats":true (vLLM reports usage on every chunk)`, Destination: &o.PerChunkUsage},
		&cli.StringSliceFlag{Name: "extra", Usage: "merge `K=V` (V as JSON if valid, else a string) or a JSON object into every formatted body; repeatable; model and stream are set by --model and --streaming only", Destination: &p.Extra},
		&cli.PathFlag{Name: "template", Usage: "with --endpoint template: the body template `FILE` (aiperf's payload_template: JSON with {{ text|tojson }}, {{ model|tojson }}, {{ max_tokens }}, {{ stream|lower }}, ...; see the README); its bytes are part of the cache key", Destination: &p.TemplateFile},
		&cli.BoolFlag{Name: "compress", Usage: "write a zstd stream of the store (for shipping; aiperf-pack unpack restores it)", Destination: &p.Compress},
	}
}

// Check parses the extras and validates the request options; its errors
// are the usage errors of aiperf-pack. It may be called once.
func (p *Pack) Check() (request.Options, error) {
	o := p.Request
	o.Extra = nil
	for _, e := range p.Extra.Value() {
		fs, err := request.ParseExtra(e)
		if err != nil {
			return o, base.UsageError("--extra %v", err)
		}
		o.Extra = append(o.Extra, fs...)
	}
	if err := p.readTemplate(&o); err != nil {
		return o, err
	}
	if err := o.Validate(); err != nil {
		switch {
		case errors.Is(err, request.ErrTemplate):
			return o, base.UsageError("--template FILE goes with --endpoint template, and --endpoint template needs it")
		case errors.Is(err, request.ErrReserved):
			return o, base.UsageError("--extra: %v (use --model and --streaming)", err)
		case errors.Is(err, request.ErrUsage):
			return o, base.UsageError("%s", usageHint(&o))
		}
		return o, base.UsageError("--endpoint: %v", err)
	}
	return o, nil
}

// usageHint says which usage flags conflict, by their names.
func usageHint(o *request.Options) string {
	switch {
	case o.Endpoint == request.Embeddings && o.Streaming:
		return "--streaming: the embeddings endpoint does not stream"
	case o.Endpoint == request.Template:
		return "--include-usage and --per-chunk-usage are for chat and completions: a template endpoint's body is its template's (write stream_options into it)"
	case o.Endpoint != request.Chat && o.Endpoint != request.Completions:
		return "--include-usage and --per-chunk-usage are for chat and completions: the " + o.Endpoint + " endpoint reports usage unasked"
	case o.IncludeUsage && o.NoIncludeUsage:
		return "--include-usage and --no-include-usage contradict each other"
	case o.IncludeUsage && !o.Streaming:
		return "--include-usage needs --streaming (a non-streaming response carries its usage anyway)"
	case o.PerChunkUsage && !o.Streaming:
		return "--per-chunk-usage needs --streaming"
	}
	return "--per-chunk-usage needs include_usage; drop --no-include-usage"
}

// Fields returns the key fields of checked request options and p's other
// settings. The request options are described by request.Options.Describe,
// which lib/request keeps in step with the bodies it formats (settings by
// their effect on the bytes): each "name=value" line is a field
// "pack.name", and the extras, as parsed (key and raw JSON value, in order:
// `k=1` and `{"k":1}` format the same body, so they give one key), are one
// list.
func (p *Pack) Fields(o request.Options) []Field {
	var fields []Field
	extra := []string{}
	for _, l := range o.Describe() {
		name, v, _ := strings.Cut(l, "=")
		if name == "extra" {
			extra = append(extra, v)
			continue
		}
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		fields = append(fields, Field{Name: "pack." + name, Value: v})
	}
	return append(fields,
		Field{Name: "pack.extra", List: extra, IsList: true},
		Field{Name: "pack.compress", Value: strconv.FormatBool(p.Compress)})
}

// PackRun are aiperf-pack's other settings: none changes a byte of the
// store.
type PackRun struct {
	Out         string
	InputsJSON  string
	NoEndMarker bool
	MaxLine     string
	Verbose     bool
}

// MaxRecordBytes is the largest record a store holds (store.MaxPayload: its
// index keeps a length in 32 bits; a test checks they agree, this package
// may not link the store).
const MaxRecordBytes = math.MaxUint32

// Check validates the settings as aiperf-pack does and returns --max-line in
// bytes.
func (r *PackRun) Check() (maxLine int, err error) {
	n, err := parseSize(r.MaxLine)
	if err != nil {
		return 0, base.UsageError("--max-line %q: %v", r.MaxLine, err)
	}
	return n, nil
}

// PackRunFlags returns aiperf-pack's flags that are not in the key, bound to
// r.
func PackRunFlags(r *PackRun) []cli.Flag {
	return []cli.Flag{
		&cli.PathFlag{Name: "o", Aliases: []string{"output"}, Usage: "output store `FILE` (required; a store is never written to stdout)", Destination: &r.Out},
		&cli.PathFlag{Name: "inputs-json", Usage: "also write the Python aiperf's inputs.json to `FILE`", Destination: &r.InputsJSON},
		&cli.BoolFlag{Name: "no-end-marker", Usage: "accept record streams without the end line (hand-made input)", Destination: &r.NoEndMarker},
		&cli.StringFlag{Name: "max-line", Value: "256MiB", Usage: "refuse a records line longer than `SIZE` (bytes, or with a KiB, MiB or GiB suffix); memory use is a small multiple of the longest line", Destination: &r.MaxLine},
		&cli.BoolFlag{Name: "v", Usage: "print a summary on stderr", Destination: &r.Verbose},
	}
}

// Exclusion is a stage flag left out of cache keys, and why.
type Exclusion struct {
	Stage string // TokenizeStage or PackStage
	Flag  string // its name, without dashes
	Why   string
}

// Excluded lists every stage flag that cannot change a byte of the store;
// the classification test reads it (and checks the claim on real runs).
// `aiperf-hash key` accepts and ignores these flags.
var Excluded = []Exclusion{
	{TokenizeStage, "verify", "re-encodes each synthesized prompt to check it; fails or passes, writes the same records"},
	{TokenizeStage, "max-line-bytes", "a limit: a trace either fits (same records) or is refused"},
	{TokenizeStage, "model-map", "weka_trace records carry the mapped model; no store byte holds it yet"},
	{TokenizeStage, "v", "a summary on stderr"},
	{PackStage, "include-usage", "only checked (needs --streaming, contradicts --no-include-usage): with --streaming, usage is asked for anyway"},
	{PackStage, "o", "the output path; the store's bytes do not name it"},
	{PackStage, "inputs-json", "writes a second file beside the store; the store is the same"},
	{PackStage, "no-end-marker", "accepts a records stream without its end line; a complete stream packs the same"},
	{PackStage, "max-line", "a limit: a records stream either fits (same store) or is refused"},
	{PackStage, "v", "a summary on stderr"},
}

// Shaping returns the names of the flags of a stage that shape its output
// bytes: of flags (the stage's shaping definitions: tokenizekey's
// TokenizeFlags, PackFlags), those Excluded does not list (such as
// --include-usage, checked with the request options it belongs to, but the
// default whenever it is allowed).
func Shaping(stage string, flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		name := f.Names()[0]
		if !IsExcluded(stage, name) {
			names = append(names, name)
		}
	}
	return names
}

// IsExcluded reports whether Excluded lists the flag of stage.
func IsExcluded(stage, flag string) bool {
	for _, e := range Excluded {
		if e.Stage == stage && e.Flag == flag {
			return true
		}
	}
	return false
}
