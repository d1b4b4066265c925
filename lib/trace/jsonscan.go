package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// The JSON scanners of this package. Every record is validated once with
// strict, in the pass that checks its syntax: strings must be valid UTF-8
// and \u escapes must not leave half of a UTF-16 surrogate pair, because
// verbatim values go to servers whose JSON parsers refuse both (and the
// Python aiperf's reader refuses such lines too). The walks over a record
// that follow use scan, which accepts what encoding/json accepts (json.Valid)
// and so also serves format detection, before a decoder names the field.
var (
	strict = jsonx.Scanner{RejectLoneSurrogates: true}
	scan   = jsonx.Scanner{AllowInvalidUTF8: true}
)

// validJSON reports whether b is one JSON value with optional surrounding
// white space; it is json.Valid.
func validJSON(b []byte) bool { return scan.Valid(b) }

// checkText validates the JSON text b strictly. A syntax error is reported
// as encoding/json words it; text that is not valid Unicode (invalid UTF-8,
// a lone surrogate escape) is reported at the JSON path of the value that
// holds it. off is the byte offset of the problem in b (0 when unknown).
func checkText(b []byte) (fe *fieldError, off int) {
	err := strict.Check(b)
	if err == nil {
		return nil, 0
	}
	var se *jsonx.SyntaxError
	if !errors.As(err, &se) || se.Unwrap() == nil {
		msg, o := syntaxError(b)
		return ferr("", "%s", msg), int(o)
	}
	off = se.Offset
	what := fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", b[off])
	if errors.Is(err, jsonx.ErrLoneSurrogate) {
		what = fmt.Sprintf("lone surrogate escape %s (half of a UTF-16 pair, which servers refuse)", b[off:off+6])
	}
	path, inKey := fieldAt(b, off)
	if inKey {
		what += " in a key"
	}
	return ferr(path, "%s at byte offset %d", what, off), off
}

// fieldAt returns the JSON path of the innermost value of the valid JSON
// text v that holds byte offset off ("" for v itself), and whether off lies
// in the key of that member rather than in its value.
func fieldAt(v []byte, off int) (path string, inKey bool) {
	i := jsonx.SkipSpace(v, 0)
	for i < len(v) && (v[i] == '{' || v[i] == '[') {
		next := -1
		visit := func(name string, val []byte, voff int) error {
			if off >= voff+len(val) {
				return nil
			}
			path = joinField(path, name)
			if off < voff {
				inKey = true
			} else {
				next = voff
			}
			return errStop
		}
		if v[i] == '{' {
			_, _ = scan.Fields(v, i, func(k, val []byte, voff int) error {
				key, _ := decodeString(k)
				return visit(strings.ToValidUTF8(key, "\ufffd"), val, voff)
			})
		} else {
			_, _ = scan.Elements(v, i, func(n int, val []byte, voff int) error {
				return visit("["+strconv.Itoa(n)+"]", val, voff)
			})
		}
		if next < 0 || next == i {
			break
		}
		i = next
	}
	return path, inKey
}

// members calls fn for each member of the JSON object v (after optional
// white space), in input order, with the decoded key, the raw value and the
// value's offset in v. Duplicate keys are all reported; callers that assign
// let the last one win, as Python's json does. v is meant to be valid: the
// walk validates it again and stops at a syntax error.
func members(v []byte, fn func(key string, val []byte, off int) error) error {
	_, err := scan.Fields(v, jsonx.SkipSpace(v, 0), func(k, val []byte, off int) error {
		key, err := decodeString(k)
		if err != nil {
			return err
		}
		return fn(key, val, off)
	})
	return err
}

// elements calls fn for each element of the JSON array v (after optional
// white space), with its index, raw bytes and offset in v.
func elements(v []byte, fn func(i int, val []byte, off int) error) error {
	_, err := scan.Elements(v, jsonx.SkipSpace(v, 0), fn)
	return err
}

// decodeString decodes a valid JSON string literal as encoding/json does.
// Records are checked strictly first, so the strings decoded from them are
// valid UTF-8; on text that was not (format detection reads the first line
// before any check), one with an escape and invalid UTF-8 (which
// jsonx.Unquote keeps) goes through encoding/json, which replaces each bad
// byte with U+FFFD.
func decodeString(lit []byte) (string, error) {
	if bytes.IndexByte(lit, '\\') >= 0 && !utf8.Valid(lit) {
		var s string
		err := json.Unmarshal(lit, &s)
		return s, err
	}
	return jsonx.Unquote(lit)
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
	s, err := decodeString(v)
	if err != nil {
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

// compactCopy returns a copy of the valid JSON text v on one line: without
// the white space between its tokens, every other byte kept. Bodies taken
// from a multi-line document (inputs_json) or a decoded capture
// (sagemaker_data_capture) may hold newlines that would break a JSONL line.
func compactCopy(v []byte) json.RawMessage {
	if jsonx.IsCompact(v) {
		return copyRaw(v)
	}
	return jsonx.AppendCompact(nil, v)
}

// copyRaw returns a copy of v that does not alias any reused buffer.
func copyRaw(v []byte) json.RawMessage {
	return append(json.RawMessage(nil), v...)
}
