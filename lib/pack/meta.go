package pack

import (
	"fmt"
	"strconv"

	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/store"
)

// Given says which endpoint options were set explicitly (on the command
// line) rather than left at their defaults. The store's metadata describes
// every body: formatted bodies have the options' values; in a store of
// verbatim bodies only, an option not given takes the value the bodies
// agree on, and one given must agree with them, for the endpoint and
// streaming. The model is never refused: a store may send to several
// models (a capture of a router's traffic). The metadata names the
// model option's model when it was given or formatted a body, else the
// model every verbatim body that names one names (none for several).
type Given struct{ Endpoint, Model, Streaming bool }

// meta is the store metadata the endpoint options o format bodies with.
func meta(o request.Options) store.Meta {
	return store.Meta{
		Endpoint:  o.Endpoint,
		Path:      request.Path(o.Endpoint),
		Model:     o.Model,
		Streaming: o.Streaming,
	}
}

// The settings the metadata records about every body.
const (
	setEndpoint = iota
	setModel
	setStreaming
	numSettings
)

// settingNames are the settings' names, which are also the names of the
// endpoint options (and aiperf-pack's flags) that set them. The model's
// claim is only described, never refused (see Given).
var settingNames = [numSettings]string{"endpoint", "model", "streaming"}

// claim is the value of one setting that the bodies so far agree on.
type claim struct {
	value string
	set   bool
	from  string // "file:line" of the verbatim body that set it; "" = the endpoint options
}

// metaCheck derives the store's metadata from its bodies and refuses
// bodies that disagree with each other or with the endpoint options.
type metaCheck struct {
	o      request.Options
	claims [numSettings]claim
	// settings is the description of the settings the store was built
	// with (Options.Settings' answer), written as store.MetaSettings.
	settings  string
	formatted bool // a formatted body was seen: the options hold for the store
	models    bool // the bodies name different models
}

func newMetaCheck(o request.Options, given Given) *metaCheck {
	m := &metaCheck{o: o}
	for i, g := range [numSettings]bool{given.Endpoint, given.Model, given.Streaming} {
		if g {
			m.claims[i] = claim{value: m.option(i), set: true}
		}
	}
	return m
}

// option returns the endpoint options' value of setting i.
func (m *metaCheck) option(i int) string {
	switch i {
	case setEndpoint:
		return m.o.Endpoint
	case setModel:
		return m.o.Model
	}
	return strconv.FormatBool(m.o.Streaming)
}

// add checks the body of rec, found at pos ("file:line").
func (m *metaCheck) add(rec *record.Record, pos string) error {
	if rec.Kind != record.KindPayload {
		if m.formatted {
			return nil
		}
		m.formatted = true
		for i := range m.claims {
			c, v := &m.claims[i], m.option(i)
			if i == setModel {
				*c = claim{value: v, set: true}
				m.models = false // the options' model: the formatted bodies name it
				continue
			}
			if c.set && c.value != v {
				return &ConflictError{Setting: settingNames[i], Value: v, Other: c.value, From: c.from, Formatted: true}
			}
			*c = claim{value: v, set: true}
		}
		return nil
	}
	b := request.Inspect(rec.Raw)
	var vals [numSettings]string
	var has [numSettings]bool
	vals[setEndpoint], has[setEndpoint] = b.Endpoint, b.Endpoint != ""
	vals[setModel], has[setModel] = b.Model, b.HasModel
	vals[setStreaming], has[setStreaming] = strconv.FormatBool(b.Stream), true
	for i := range m.claims {
		if !has[i] {
			continue
		}
		c := &m.claims[i]
		if !c.set {
			*c = claim{value: vals[i], set: true, from: pos}
			continue
		}
		if c.value != vals[i] && !(i == setEndpoint && request.Refines(c.value, vals[i])) {
			if i == setModel {
				if c.from != "" { // not the options' model, given or formatted
					m.models = true
				}
				continue
			}
			return &ConflictError{Setting: settingNames[i], Value: vals[i], Other: c.value, From: c.from}
		}
	}
	return nil
}

// meta returns the store's metadata: what every body agrees on, the
// endpoint options for what none says.
func (m *metaCheck) meta() store.Meta {
	md := meta(m.o)
	if c := m.claims[setEndpoint]; c.set {
		md.Endpoint, md.Path = c.value, request.Path(c.value)
	}
	if c := m.claims[setModel]; c.set {
		md.Model = c.value
	}
	if m.models {
		md.Model = ""
	}
	if c := m.claims[setStreaming]; c.set {
		md.Streaming = c.value == "true"
	}
	md.Settings = m.settings
	return md
}

// ConflictError is a body that disagrees with another body of the store,
// or with the endpoint options, about a setting the store's metadata
// records for every body.
type ConflictError struct {
	Setting string // "endpoint" or "streaming": the endpoint option that sets it
	Value   string // this body's value
	Other   string // the value it disagrees with
	// From is the "file:line" of the verbatim body that holds Other; ""
	// when Other is the endpoint options' value.
	From string
	// Formatted reports that this body was formatted with the endpoint
	// options (Value is theirs) and From is a verbatim body.
	Formatted bool
}

// Options reports that the body disagrees with an endpoint option that was
// given (the fix is to change or drop the option).
func (e *ConflictError) Options() bool { return e.From == "" }

func (e *ConflictError) Error() string {
	const agree = "every body of a store must agree (its metadata describes them all)"
	switch {
	case e.Formatted:
		return fmt.Sprintf("formatted with %s (the endpoint options), but the payload at %s has %s: %s",
			e.phrase(e.Value), e.From, e.phrase(e.Other), agree)
	case e.From == "":
		return fmt.Sprintf("has %s, but the endpoint options say %s %s", e.phrase(e.Value), e.Setting, e.Other)
	}
	return fmt.Sprintf("has %s, but the payload at %s has %s: %s", e.phrase(e.Value), e.From, e.phrase(e.Other), agree)
}

// phrase says what a body with value v holds.
func (e *ConflictError) phrase(v string) string {
	switch e.Setting {
	case "endpoint":
		if v == request.Completions {
			return `"prompt" (a completions body)`
		}
		return `"messages" (a chat body)`
	}
	return `"stream": ` + v
}
