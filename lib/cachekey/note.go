package cachekey

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// A Note is what `aiperf-hash key` leaves in the cache root under the key
// it printed (lib/cachedir's Keys folder): the description the key is the
// hash of, and the names of the inputs it digested. With it, aiperf-cache
// populate and ensure know what a key from aiperf-hash describes without
// being told (--explain), check the store a build made against it, and
// record the inputs' names in the entry's manifest.
//
// A note cannot lie about its key's settings: ParseNote checks that the
// description hashes to the key. Its input names are what was typed, and
// only label the entry.
//
//	{"v":1,"key":"sha256:…","inputs":["trace.jsonl"],"explain":"aiperf-cachekey v1\n…"}
type Note struct {
	V       int      `json:"v"`
	Key     string   `json:"key"`
	Inputs  []string `json:"inputs,omitempty"`
	Explain string   `json:"explain"`
}

// Limits of a note, which is read from a folder others may write.
const (
	MaxNoteSize   = 512 << 10
	MaxNoteInputs = 64
	MaxInputName  = 4096
)

// NewNote returns the note of a description with the inputs' names.
func NewNote(description string, inputs []string) *Note {
	if len(inputs) > MaxNoteInputs {
		inputs = inputs[:MaxNoteInputs]
	}
	return &Note{V: 1, Key: KeyOf(description).String(), Inputs: inputs, Explain: description}
}

// Encode returns the note as one line of JSON.
func (n *Note) Encode() ([]byte, error) {
	b, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseNote decodes a note and checks that it is the note of k: version 1,
// k's key, and a description whose SHA-256 is k; input names are UTF-8
// text without control characters, within the limits.
func ParseNote(b []byte, k Key) (*Note, error) {
	if len(b) > MaxNoteSize {
		return nil, fmt.Errorf("key note: %d bytes, more than %d", len(b), MaxNoteSize)
	}
	var n Note
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&n); err != nil {
		return nil, fmt.Errorf("key note: %w", err)
	}
	switch {
	case n.V != 1:
		return nil, fmt.Errorf("key note: version %d, want 1", n.V)
	case n.Key != k.String():
		return nil, errors.New("key note: of another key")
	case KeyOf(n.Explain) != k:
		return nil, errors.New("key note: its description does not hash to its key")
	case len(n.Inputs) > MaxNoteInputs:
		return nil, fmt.Errorf("key note: %d inputs, more than %d", len(n.Inputs), MaxNoteInputs)
	}
	for _, in := range n.Inputs {
		if err := CheckInputName(in); err != nil {
			return nil, fmt.Errorf("key note: %w", err)
		}
	}
	return &n, nil
}

// CheckInputName reports why name cannot label an input (nil when it can):
// 1 to MaxInputName bytes of UTF-8 without control characters.
func CheckInputName(name string) error {
	if name == "" || len(name) > MaxInputName || !utf8.ValidString(name) {
		return fmt.Errorf("input name is not 1 to %d bytes of UTF-8", MaxInputName)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return errors.New("input name holds a control character")
		}
	}
	return nil
}
