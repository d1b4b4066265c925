package store

import (
	"fmt"
	"maps"
)

// Metadata keys: the one definition of each key that aiperf-pack writes and
// aiperf-replay reads. Values are strings (the meta section is a sorted
// string map, see format.go); Meta is their parsed form.
const (
	// MetaEndpoint is the endpoint type the bodies are for: "chat" or
	// "completions" (lib/request's names). Early stores and hand-made ones
	// may hold a URL path or nothing.
	MetaEndpoint = "endpoint"
	// MetaPath is the URL path the bodies are sent to.
	MetaPath = "path"
	// MetaModel is the model every body names ("" when they name none, or
	// several).
	MetaModel = "model"
	// MetaStreaming is "true" when the bodies ask for a streamed answer
	// ("stream": true), "false" otherwise.
	MetaStreaming = "streaming"
	// MetaSettings is the canonical description of the settings that shaped
	// the store's bytes (the settings part of `aiperf-hash key --explain`),
	// for a cache to check a store against its key.
	MetaSettings = "settings"
)

// Meta is a store's metadata, parsed. It describes every body of the
// store: aiperf-pack writes the values its endpoint options formatted the
// bodies with, or, for verbatim bodies, the values the bodies themselves
// agree on.
type Meta struct {
	Endpoint  string // MetaEndpoint
	Path      string // MetaPath
	Model     string // MetaModel
	Streaming bool   // MetaStreaming
	Settings  string // MetaSettings; "" when absent
	// Other holds the keys this build does not know, as they are: they
	// round-trip through ParseMeta and Map unchanged.
	Other map[string]string
}

// ParseMeta parses a metadata map. Absent keys give zero values; a
// streaming value other than "true", "false" or "" is an error.
func ParseMeta(m map[string]string) (Meta, error) {
	var out Meta
	for k, v := range m {
		switch k {
		case MetaEndpoint:
			out.Endpoint = v
		case MetaPath:
			out.Path = v
		case MetaModel:
			out.Model = v
		case MetaSettings:
			out.Settings = v
		case MetaStreaming:
			switch v {
			case "true":
				out.Streaming = true
			case "false", "":
			default:
				return Meta{}, fmt.Errorf("meta %s is %q: want true or false", MetaStreaming, v)
			}
		default:
			if out.Other == nil {
				out.Other = make(map[string]string)
			}
			out.Other[k] = v
		}
	}
	return out, nil
}

// Map returns the metadata as the map a Writer stores. The endpoint, path,
// model and streaming keys are always present (empty values included, as
// aiperf-pack has always written them), settings only when set.
func (m Meta) Map() map[string]string {
	out := maps.Clone(m.Other)
	if out == nil {
		out = make(map[string]string, 5)
	}
	out[MetaEndpoint] = m.Endpoint
	out[MetaPath] = m.Path
	out[MetaModel] = m.Model
	out[MetaStreaming] = "false"
	if m.Streaming {
		out[MetaStreaming] = "true"
	}
	if m.Settings != "" {
		out[MetaSettings] = m.Settings
	}
	return out
}

// Metadata returns the store's metadata, parsed when the store was opened
// (Meta returns the raw map). Other is a copy.
func (r *Reader) Metadata() Meta {
	m := r.info
	m.Other = maps.Clone(m.Other)
	return m
}

// SetMeta replaces the metadata the Writer was created with; it must come
// before Commit. A writer that learns its metadata from the records it
// adds (aiperf-pack deriving it from verbatim bodies) sets it last.
func (w *Writer) SetMeta(m map[string]string) error {
	if w.done {
		return fmt.Errorf("store: SetMeta after commit or abort")
	}
	b, err := encodeMeta(m)
	if err != nil {
		return err
	}
	w.meta = b
	return nil
}
