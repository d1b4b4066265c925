package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxKeyLine bounds the first line of stdin that ReadKeyLine reads: the
// longest key, a carriage return and the newline.
const maxKeyLine = MaxKeyLen + 2

// ReadKeyLine reads the first line of r (a key on stdin) one byte at a
// time, so that nothing after it is consumed (ensure hands the rest of
// stdin to its build), and no more than a key's length of it (a first line
// of 500 MB is not a key).
func ReadKeyLine(r io.Reader) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) <= maxKeyLine {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				return string(line), nil
			}
			line = append(line, b[0])
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(line) == 0 {
				return "", errors.New("no key on stdin")
			}
			return string(line), nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("the first line of stdin is longer than any key (%d bytes)", MaxKeyLen)
}

// CheckExplain checks that text explains k: for a digest key, text must
// be what the key was hashed from (its SHA-256 is the key), so that a
// manifest never keeps the explanation of another key. A named key, or an
// empty text, takes anything.
func CheckExplain(k Key, text string) error {
	h, ok := strings.CutPrefix(k.String(), "sha256:")
	if !ok || text == "" {
		return nil
	}
	if sum := sha256.Sum256([]byte(text)); hex.EncodeToString(sum[:]) != h {
		return fmt.Errorf("its SHA-256 is %x, not the key %s: it explains another key", sum, k)
	}
	return nil
}

// Select returns the entries of keys, in their order, as List describes
// them: every entry listed under a key (a damaged one included), or, for a
// key with none, an Info of that key with ErrMiss and no Dir. No keys
// selects every entry.
func (c *Cache) Select(keys []Key) ([]Info, error) {
	all, err := c.List()
	if err != nil || len(keys) == 0 {
		return all, err
	}
	var out []Info
	for _, k := range keys {
		found := false
		for _, in := range all {
			if in.Key == k {
				out, found = append(out, in), true
			}
		}
		if !found {
			out = append(out, Info{Key: k, Err: ErrMiss})
		}
	}
	return out, nil
}
