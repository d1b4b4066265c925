package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The helpers below walk JSON text that json.Valid has already accepted, so
// they only find boundaries and never re-check the grammar. They return
// sub-slices of their input: callers copy what they keep.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// members calls fn for each member of the valid JSON object v, in input
// order, with the decoded key, the raw value and the value's offset in v.
// Duplicate keys are all reported; callers that assign let the last one win,
// as Python's json does.
func members(v []byte, fn func(key string, val []byte, off int) error) error {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == '}' {
		return nil
	}
	for i < len(v) {
		end := skipString(v, i)
		key, err := decodeKey(v[i:end])
		if err != nil {
			return err
		}
		i = skipSpace(v, end)
		i = skipSpace(v, i+1) // ':'
		start := i
		i = skipValue(v, i)
		if err := fn(key, v[start:i], start); err != nil {
			return err
		}
		i = skipSpace(v, i)
		if i >= len(v) || v[i] == '}' {
			return nil
		}
		i = skipSpace(v, i+1) // ','
	}
	return nil
}

// elements calls fn for each element of the valid JSON array v, with its
// index, raw bytes and offset in v.
func elements(v []byte, fn func(i int, val []byte, off int) error) error {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return errors.New("not a JSON array")
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return nil
	}
	for n := 0; i < len(v); n++ {
		start := i
		i = skipValue(v, i)
		if err := fn(n, v[start:i], start); err != nil {
			return err
		}
		i = skipSpace(v, i)
		if i >= len(v) || v[i] == ']' {
			return nil
		}
		i = skipSpace(v, i+1)
	}
	return nil
}

func decodeKey(raw []byte) (string, error) {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// JSON value kinds, named as in error messages.
const (
	kindNull   = "null"
	kindBool   = "boolean"
	kindNumber = "number"
	kindString = "string"
	kindArray  = "array"
	kindObject = "object"
)

func kind(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case 'n':
		return kindNull
	case 't', 'f':
		return kindBool
	case '"':
		return kindString
	case '[':
		return kindArray
	case '{':
		return kindObject
	}
	return kindNumber
}

func isNull(v []byte) bool { return len(v) == 0 || v[0] == 'n' }

func wrongKind(field, want string, v []byte) *fieldError {
	return ferr(field, "must be %s, got %s", want, kind(v))
}

// stringValue decodes a JSON string.
func stringValue(field string, v []byte) (string, *fieldError) {
	if kind(v) != kindString {
		return "", wrongKind(field, "a string", v)
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", ferr(field, "%v", err)
	}
	return s, nil
}

// stringList decodes an array of strings.
func stringList(field string, v []byte) ([]string, *fieldError) {
	if kind(v) != kindArray {
		return nil, wrongKind(field, "an array of strings", v)
	}
	var out []string
	var fe *fieldError
	_ = elements(v, func(i int, e []byte, _ int) error {
		s, err := stringValue(fmt.Sprintf("%s[%d]", field, i), e)
		if err != nil {
			fe = err
			return err
		}
		out = append(out, s)
		return nil
	})
	if fe != nil {
		return nil, fe
	}
	return out, nil
}

// objectList checks that v is an array of objects and returns its length.
func objectList(field string, v []byte) (int, *fieldError) {
	if kind(v) != kindArray {
		return 0, wrongKind(field, "an array of objects", v)
	}
	n := 0
	var fe *fieldError
	_ = elements(v, func(i int, e []byte, _ int) error {
		if kind(e) != kindObject {
			fe = wrongKind(fmt.Sprintf("%s[%d]", field, i), "an object", e)
			return fe
		}
		n++
		return nil
	})
	return n, fe
}

// hasMember reports whether the valid JSON object v has the key.
func hasMember(v []byte, key string) bool {
	found := false
	_ = members(v, func(k string, _ []byte, _ int) error {
		if k == key {
			found = true
		}
		return nil
	})
	return found
}

// member returns the value of the last member named key, or nil.
func member(v []byte, key string) []byte {
	var out []byte
	_ = members(v, func(k string, val []byte, _ int) error {
		if k == key {
			out = val
		}
		return nil
	})
	return out
}

// validateMessages applies aiperf's minimal chat-messages check: a non-empty
// array whose every element is an object with a "role" key.
func validateMessages(field string, v []byte) *fieldError {
	if kind(v) != kindArray {
		return wrongKind(field, "a non-empty array of message objects", v)
	}
	n := 0
	var fe *fieldError
	_ = elements(v, func(i int, e []byte, _ int) error {
		n++
		if kind(e) != kindObject || !hasMember(e, "role") {
			fe = ferr(fmt.Sprintf("%s[%d]", field, i), "must be an object with a \"role\" key")
			return fe
		}
		return nil
	})
	if fe != nil {
		return fe
	}
	if n == 0 {
		return ferr(field, "must be a non-empty array")
	}
	return nil
}

// syntaxError describes why json.Valid rejected b, with the byte offset.
func syntaxError(b []byte) (string, int64) {
	var v struct{} // checks the grammar without building values
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "invalid JSON: " + se.Error(), se.Offset
	}
	if err != nil {
		return "invalid JSON: " + err.Error(), 0
	}
	return "invalid JSON", 0
}

// copyRaw returns a copy of v that does not alias any reused buffer.
func copyRaw(v []byte) json.RawMessage {
	return append(json.RawMessage(nil), v...)
}
