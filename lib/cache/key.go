package cache

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/aiperf/toolkit/lib/cachekey"
)

// Key names an entry. It is one of
//
//   - a digest key: a cachekey.Key, spelled "sha256:" and 64 lowercase hex
//     digits as aiperf-hash prints it (DigestKey and Digest convert; the
//     spelling is parsed by cachekey.Parse alone); or
//   - a named key of 1 to 128 bytes from [a-z0-9._-], starting with a letter
//     or a digit, for entries a user names by hand ("mooncake-conv-v3").
//
// Neither form can hold a slash, a NUL, "..", a leading dot or an upper-case
// letter, so a key always names exactly one folder inside the root, on any
// filesystem (case-insensitive ones included), and never a path outside it.
type Key struct{ s string }

const (
	digestPrefix = "sha256:"
	maxNamedKey  = 128
)

// MaxKeyLen is the length of the longest key (a named key; a digest key has 71 bytes).
const MaxKeyLen = maxNamedKey

// ParseKey validates s as a Key.
func ParseKey(s string) (Key, error) {
	if strings.HasPrefix(s, digestPrefix) {
		d, err := cachekey.Parse(s)
		if err != nil {
			return Key{}, fmt.Errorf("key %q: want sha256: and 64 hex digits (lowercase hex: 0-9, a-f)", clip(s))
		}
		return DigestKey(d), nil
	}
	if s == "" {
		return Key{}, fmt.Errorf("empty key")
	}
	if len(s) > maxNamedKey {
		return Key{}, fmt.Errorf("key %q: %d bytes, a named key has at most %d", clip(s), len(s), maxNamedKey)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return Key{}, fmt.Errorf("key %q: byte %d is %q; a key is sha256:<64 hex> or a name of [a-z0-9._-] starting with a letter or digit", clip(s), i, c)
		}
	}
	return Key{s}, nil
}

// MustParseKey is ParseKey for keys known to be valid; it panics otherwise.
func MustParseKey(s string) Key {
	k, err := ParseKey(s)
	if err != nil {
		panic(err)
	}
	return k
}

// DigestKey returns the Key of the entry for the digest d.
func DigestKey(d cachekey.Key) Key { return Key{d.String()} }

// Digest returns the digest of a digest key; ok is false for a named key
// (and the zero Key).
func (k Key) Digest() (d cachekey.Key, ok bool) {
	if !strings.HasPrefix(k.s, digestPrefix) {
		return d, false
	}
	d, err := cachekey.Parse(k.s)
	return d, err == nil
}

// String returns the key as it was given.
func (k Key) String() string { return k.s }

// IsZero reports whether k is the zero Key (no key).
func (k Key) IsZero() bool { return k.s == "" }

// shard is the name of the folder holding k's entry: the key's first byte in
// hex. For a digest key that is the first byte of the digest, so the 256
// shards fill evenly; for a named key it is the first character.
func (k Key) shard() string {
	if h, ok := strings.CutPrefix(k.s, digestPrefix); ok {
		return h[:2]
	}
	return hex.EncodeToString([]byte{k.s[0]})
}

// name is the folder name of k's entry inside its shard: the hex digits of
// a digest key, and "n-" plus a named key (hex digits never hold a '-', so
// the two forms cannot collide).
func (k Key) name() string {
	if h, ok := strings.CutPrefix(k.s, digestPrefix); ok {
		return h
	}
	return "n-" + k.s
}

// keyFromName inverts name for the folder names found while walking a shard.
func keyFromName(name string) (Key, bool) {
	s := name
	if n, ok := strings.CutPrefix(name, "n-"); ok {
		s = n
	} else {
		s = digestPrefix + name
	}
	k, err := ParseKey(s)
	if err != nil || k.name() != name {
		return Key{}, false
	}
	return k, true
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
