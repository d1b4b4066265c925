package request

import (
	"errors"
	"fmt"

	"github.com/aiperf/toolkit/lib/bodytemplate"
	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/record"
)

// The template endpoint (the Python aiperf's): each prompt or messages
// record is rendered through Options.Template (lib/bodytemplate), the body
// stored compact; then --extra and the record's extra are merged into it
// as into every formatted body (an existing member keeps its place). Its
// max tokens is the record's when the template uses max_tokens, else the
// body's by MaxTokensOf's rule (so also when an extra sets a max-token
// member). A payload record is a body already (use
// raw), and a session of deltas cannot be one: replay splices history into
// a messages array it knows, which a template's body need not have.

// ErrTemplate is wrapped by the errors about a missing or misplaced body
// template.
var ErrTemplate = errors.New("body template")

func (o *Options) validateTemplate() error {
	switch {
	case o.Endpoint == Template && o.Template == nil:
		return fmt.Errorf("%w: the template endpoint needs one", ErrTemplate)
	case o.Endpoint != Template && o.Template != nil:
		return fmt.Errorf("%w: only the template endpoint takes one, not %s", ErrTemplate, o.Endpoint)
	}
	return nil
}

// formatTemplate renders rec's body.
func (f *Formatter) formatTemplate(rec *record.Record) (Body, error) {
	t := f.o.Template
	switch {
	case rec.Kind == record.KindPayload:
		return Body{}, &FieldError{Field: "payload", Err: errors.New("the template endpoint renders prompt and messages records; a payload record is a body already (--endpoint raw sends those)")}
	case rec.ContextMode == record.ContextDeltas:
		return Body{}, &FieldError{Field: "context_mode", Err: fmt.Errorf("%s: the template endpoint renders each turn alone; replay cannot splice a session's history into a template's body", record.ContextDeltas)}
	case f.o.Model == "" && t.Uses(bodytemplate.Model):
		return Body{}, ErrNoModel
	}
	v := bodytemplate.Values{Model: f.model, MaxTokens: rec.MaxTokens, HasMaxTokens: rec.HasMaxTokens, Stream: f.o.Streaming}
	field := rec.Kind.String()
	if rec.Kind == record.KindPrompt {
		v.Text = rec.Raw
		if t.Uses(bodytemplate.Texts) {
			f.batch = append(append(append(f.batch[:0], '['), rec.Raw...), ']')
			v.Texts = f.batch
		}
		if t.Uses(bodytemplate.Messages) {
			f.scratch = append(append(append(f.scratch[:0], `[{"role":"user","content":`...), rec.Raw...), `}]`...)
			v.Messages = f.scratch
		}
	} else {
		v.Messages = rec.Raw
		if t.Uses(bodytemplate.Text) || t.Uses(bodytemplate.Texts) {
			batch, err := appendTexts(f.batch[:0], rec.Raw)
			switch {
			case errors.Is(err, errNoText): // text None, texts []
				batch = append(batch[:0], "[]"...)
			case err != nil:
				return Body{}, &FieldError{Field: field, Err: err}
			}
			f.batch, v.Texts = batch, batch
			v.Text = lastElement(batch)
		}
	}
	body, err := t.Render(f.tmpl[:0], &v)
	if err != nil {
		return Body{}, &FieldError{Field: field, Err: err}
	}
	f.tmpl = body
	if len(f.o.Extra) > 0 || rec.Extra != nil {
		return f.templateExtras(rec, body)
	}
	b := Body{Parts: append(f.parts[:0], body), Len: len(body)}
	f.parts = b.Parts
	b.MaxTokens, b.HasMaxTokens = f.templateMaxTokens(rec, body)
	return b, nil
}

// templateExtras merges the extras into a rendered body.
func (f *Formatter) templateExtras(rec *record.Record, body []byte) (Body, error) {
	fs := f.fields[:0]
	_, err := jsonx.Fields(body, 0, func(k, v []byte, _ int) error {
		key, err := jsonx.Unquote(k)
		fs = append(fs, member{key: key, value: v})
		return err
	})
	if err != nil {
		return Body{}, &FieldError{Field: rec.Kind.String(), Err: err}
	}
	fs, maxSet, err := f.extras(fs, rec)
	if err != nil {
		return Body{}, err
	}
	f.fields = fs
	b := f.assemble(fs)
	b.MaxTokens, b.HasMaxTokens = rec.MaxTokens, rec.HasMaxTokens
	if maxSet || !f.o.Template.Uses(bodytemplate.MaxTokens) {
		b.MaxTokens, b.HasMaxTokens = maxTokensOfMembers(fs)
	}
	return b, nil
}

// templateMaxTokens is a rendered body's output-token limit.
func (f *Formatter) templateMaxTokens(rec *record.Record, body []byte) (uint32, bool) {
	if f.o.Template.Uses(bodytemplate.MaxTokens) {
		return rec.MaxTokens, rec.HasMaxTokens
	}
	return MaxTokensOf(body)
}

// lastElement returns the last element of a JSON array.
func lastElement(arr []byte) []byte {
	var last []byte
	jsonx.Elements(arr, 0, func(_ int, v []byte, _ int) error {
		last = v
		return nil
	})
	return last
}
