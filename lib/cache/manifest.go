package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/cachekey"
)

// The manifest of an entry, version 1: a JSON object written last, through a
// temporary file and a rename, after every file of the entry is complete and
// synced. An entry without a manifest that parses, names its own key and
// lists files present at the sizes it gives is a miss.
//
//	{
//	  "v": 1,
//	  "key": "sha256:…",                  the entry's key
//	  "created_unix_ns": 1764480000000000000,
//	  "tool": "aiperf-cache v0.3.0",       the program that wrote it, with its version
//	  "files": [                           the first file is the one lookup prints
//	    {"name": "store.aipk", "size": 2147483648, "digest_kind": "aipk-trailer",
//	     "digest": "…64 hex…", "store_format_version": 1,
//	     "model": "m", "endpoint": "chat"},  a store's: what its metadata names
//	    {"name": "inputs.json", "size": 5120, "digest_kind": "sha256", "digest": "…"}
//	  ],
//	  "explain": "…",                      optional: the text the key was hashed from
//	  "inputs": ["mooncake.jsonl"]         optional: the names of the inputs the key digested
//	}                                      (from aiperf-hash key's note, lib/cachekey.Note)
//
// model, endpoint and inputs label an entry for aiperf-cache ls; they were
// added after version 1 was out, so older manifests lack them (and are read
// as before) and older readers ignore them.
//
// Digest kinds:
//
//   - "sha256": the SHA-256 of the file's bytes (what sha256sum prints).
//   - "aipk-trailer": the checksum an .aipk store carries in its trailer:
//     the SHA-256 of the bytes from the end of the 160-byte header up to the
//     40-byte trailer, followed by the header's bytes. Recording it costs O(1)
//     (read the trailer, after lib/store's structural checks), so populating
//     a multi-GB store never reads it; verify recomputes it over every byte,
//     and checks the store's structure as well.
//
// Readers ignore unknown fields (adding one does not change "v") and treat a
// newer "v" as a miss, so an older aiperf-cache never misreads a newer entry.
const ManifestVersion = 1

// Digest kinds (see the manifest format above).
const (
	DigestSHA256      = "sha256"
	DigestAipkTrailer = "aipk-trailer"
)

// Limits on what a manifest may hold, so that a hostile one (an import
// stream, a planted file) costs little to reject.
const (
	maxManifestSize = 1 << 20
	maxExplain      = 256 << 10
	maxFiles        = 64
	maxFileName     = 255
)

// manifestName is the manifest's file name inside an entry folder; no entry
// file may take it.
const manifestName = "manifest"

// ErrManifestVersion is wrapped when a manifest has a newer version.
var ErrManifestVersion = errors.New("manifest from a newer aiperf-cache")

// Manifest describes an entry.
type Manifest struct {
	V             int    `json:"v"`
	Key           string `json:"key"`
	CreatedUnixNS int64  `json:"created_unix_ns"`
	Tool          string `json:"tool"`
	Files         []File `json:"files"`
	Explain       string `json:"explain,omitempty"`
	// Inputs names the inputs the key digested (as aiperf-hash key was
	// given them), when populate or ensure knew them.
	Inputs []string `json:"inputs,omitempty"`
}

// File is one file of an entry.
type File struct {
	Name       string `json:"name"`
	Size       int64  `json:"size"`
	DigestKind string `json:"digest_kind"`
	Digest     string `json:"digest"`
	// StoreVersion is the .aipk format version of an aipk-trailer file.
	StoreVersion uint32 `json:"store_format_version,omitempty"`
	// Model and Endpoint are what a store's metadata names (store.Meta):
	// the model its bodies name and their endpoint type.
	Model    string `json:"model,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
}

// Size returns the total size of the entry's files.
func (m *Manifest) Size() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Lookup returns the manifest's file called name.
func (m *Manifest) file(name string) (File, bool) {
	for _, f := range m.Files {
		if f.Name == name {
			return f, true
		}
	}
	return File{}, false
}

// ParseManifest decodes and validates a manifest.
func ParseManifest(b []byte) (*Manifest, error) {
	if len(b) > maxManifestSize {
		return nil, fmt.Errorf("manifest: %d bytes, more than %d", len(b), maxManifestSize)
	}
	var probe struct {
		V *int `json:"v"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if probe.V == nil {
		return nil, errors.New(`manifest: no "v" field`)
	}
	if *probe.V != ManifestVersion {
		if *probe.V > ManifestVersion {
			return nil, fmt.Errorf("manifest: version %d, this aiperf-cache reads %d: %w", *probe.V, ManifestVersion, ErrManifestVersion)
		}
		return nil, fmt.Errorf("manifest: unknown version %d", *probe.V)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("manifest: data after the JSON object")
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return &m, nil
}

func (m *Manifest) validate() error {
	if _, err := ParseKey(m.Key); err != nil {
		return err
	}
	if m.CreatedUnixNS < 0 {
		return fmt.Errorf("created_unix_ns %d is negative", m.CreatedUnixNS)
	}
	if len(m.Tool) > 256 || !utf8.ValidString(m.Tool) {
		return errors.New("tool is not UTF-8 text of at most 256 bytes")
	}
	if len(m.Explain) > maxExplain || !utf8.ValidString(m.Explain) {
		return fmt.Errorf("explain is not UTF-8 text of at most %d bytes", maxExplain)
	}
	if len(m.Inputs) > cachekey.MaxNoteInputs {
		return fmt.Errorf("%d inputs, more than %d", len(m.Inputs), cachekey.MaxNoteInputs)
	}
	for i, in := range m.Inputs {
		if err := cachekey.CheckInputName(in); err != nil {
			return fmt.Errorf("inputs[%d]: %w", i, err)
		}
	}
	if len(m.Files) == 0 || len(m.Files) > maxFiles {
		return fmt.Errorf("%d files, want 1 to %d", len(m.Files), maxFiles)
	}
	seen := make(map[string]bool, len(m.Files))
	var total int64
	for i, f := range m.Files {
		if err := validFileName(f.Name); err != nil {
			return fmt.Errorf("files[%d]: %w", i, err)
		}
		if seen[f.Name] {
			return fmt.Errorf("files[%d]: name %q listed twice", i, f.Name)
		}
		seen[f.Name] = true
		if f.Size < 0 || total+f.Size < total {
			return fmt.Errorf("files[%d] %q: bad size %d", i, f.Name, f.Size)
		}
		total += f.Size
		if !isHex64(f.Digest) {
			return fmt.Errorf("files[%d] %q: digest is not 64 lowercase hex digits", i, f.Name)
		}
		if !label(f.Model) || !label(f.Endpoint) {
			return fmt.Errorf("files[%d] %q: model or endpoint is not UTF-8 text of at most %d bytes without control characters", i, f.Name, maxLabel)
		}
		switch f.DigestKind {
		case DigestSHA256:
			if f.StoreVersion != 0 {
				return fmt.Errorf("files[%d] %q: store_format_version on a %s file", i, f.Name, f.DigestKind)
			}
		case DigestAipkTrailer:
			if f.StoreVersion == 0 {
				return fmt.Errorf("files[%d] %q: aipk-trailer file without store_format_version", i, f.Name)
			}
		default:
			return fmt.Errorf("files[%d] %q: unknown digest_kind %q", i, f.Name, f.DigestKind)
		}
	}
	return nil
}

// Encode returns the manifest's canonical encoding (indented JSON and a
// newline), which ParseManifest reads back to an equal Manifest.
func (m *Manifest) Encode() ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ValidFileName reports why n cannot name a file of an entry (nil when it
// can): see validFileName.
func ValidFileName(n string) error { return validFileName(n) }

// validFileName checks the name of an entry file: one path element that a
// user can type, never hidden (temporary files start with a dot), never the
// manifest's name.
func validFileName(n string) error {
	switch {
	case n == "" || len(n) > maxFileName:
		return fmt.Errorf("file name %q: want 1 to %d bytes", clip(n), maxFileName)
	case n == manifestName:
		return fmt.Errorf("file name %q is reserved for the manifest", n)
	case strings.ContainsAny(n, "/\\"):
		return fmt.Errorf("file name %q is not a single path element", clip(n))
	case n[0] == '.':
		return fmt.Errorf("file name %q starts with a dot", clip(n))
	case !utf8.ValidString(n):
		return fmt.Errorf("file name %q is not UTF-8", clip(n))
	}
	for _, r := range n {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("file name %q holds a control character", clip(n))
		}
	}
	return nil
}

// maxLabel bounds a file's model and endpoint.
const maxLabel = 1024

// label reports whether s may be a file's model or endpoint: empty, or
// UTF-8 of at most maxLabel bytes without control characters.
func label(s string) bool {
	if len(s) > maxLabel || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
