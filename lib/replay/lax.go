package replay

import (
	"bytes"
	"errors"
)

// A lax JSON walker for the server's chunks, which the client reads a few
// members of and otherwise passes over. It checks the structure (brackets,
// colons, commas, the ends of strings, what may start a value) and finds a
// string's end with a vectorised byte search, but does not check what the
// client never interprets: the escapes and UTF-8 inside strings and the
// digits of numbers (usage counts go through jsonx.ParseUint where they are
// read). On every valid JSON document it finds exactly what a strict parser
// finds (FuzzChunk checks this against encoding/json); it may accept some
// invalid ones. A chunk is ~150 bytes and every request streams dozens, so
// this walker is a good part of the client's cost per request: the strict
// scanner cost ~1.1 µs a chunk here, this one less than half.

var errLax = errors.New("malformed JSON")

// laxMaxDepth bounds nesting (an OpenAI chunk is 4 levels deep).
const laxMaxDepth = 64

func laxSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// laxString returns the index past the string that starts at b[i] == '"'.
func laxString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b), errLax
		}
		j += k
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j, nil
		}
	}
}

// laxSkip returns the index past the value at b[i].
func laxSkip(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, errLax
	}
	switch c := b[i]; {
	case c == '"':
		return laxString(b, i)
	case c == '{':
		return laxObject(b, i, depth+1, nil)
	case c == '[':
		return laxArray(b, i, depth+1, nil)
	case c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' || c == 'n':
		j := i + 1
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\n', '\r', '\t', ':', '"', '{', '[':
				return j, nil
			}
			j++
		}
		return j, nil
	}
	return i, errLax
}

// laxObject walks the object at b[i] == '{', calling fn (when not nil) with
// each raw key (quotes included) and raw value.
func laxObject(b []byte, i, depth int, fn func(key, value []byte) error) (int, error) {
	if depth > laxMaxDepth || i >= len(b) || b[i] != '{' {
		return i, errLax
	}
	return laxMembers(b, i, func(key []byte, vs int) (int, error) {
		end, err := laxSkip(b, vs, depth)
		if err == nil && fn != nil {
			err = fn(key, b[vs:end])
		}
		return end, err
	})
}

// laxMembers walks the members of the object at b[i] == '{': for each, it
// reads the key (quotes included) and the colon, and member walks the value
// starting at vs and returns the index past it. The chunk's own walkers
// (chunk.go) and laxObject share it.
func laxMembers(b []byte, i int, member func(key []byte, vs int) (int, error)) (int, error) {
	i = laxSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		vs, key, err := laxMember(b, i)
		if err != nil {
			return vs, err
		}
		if i, err = member(key, vs); err != nil {
			return i, err
		}
		var end bool
		if i, end, err = laxNext(b, i, '}'); end || err != nil {
			return i, err
		}
	}
}

// laxElements walks the elements of the array at b[i] == '[': element walks
// the one starting at b[vs] and returns the index past it.
func laxElements(b []byte, i int, element func(vs int) (int, error)) (int, error) {
	i = laxSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = element(i); err != nil {
			return i, err
		}
		var end bool
		if i, end, err = laxNext(b, i, ']'); end || err != nil {
			return i, err
		}
	}
}

// laxMember reads an object member's key at b[i] (quotes included) and
// its colon, and returns where its value starts.
func laxMember(b []byte, i int) (vs int, key []byte, err error) {
	if i >= len(b) || b[i] != '"' {
		return i, nil, errLax
	}
	ks := i
	if i, err = laxString(b, i); err != nil {
		return i, nil, err
	}
	key = b[ks:i]
	i = laxSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, nil, errLax
	}
	return laxSpace(b, i+1), key, nil
}

// laxNext reads what follows a member or element at b[i]: a comma (then
// i is where the next one starts) or the closing bracket (end; i is past
// it).
func laxNext(b []byte, i int, closing byte) (next int, end bool, err error) {
	i = laxSpace(b, i)
	if i >= len(b) {
		return i, false, errLax
	}
	switch b[i] {
	case ',':
		return laxSpace(b, i+1), false, nil
	case closing:
		return i + 1, true, nil
	}
	return i, false, errLax
}

// laxArray walks the array at b[i] == '[', calling fn (when not nil) with
// each raw element.
func laxArray(b []byte, i, depth int, fn func(value []byte) error) (int, error) {
	if depth > laxMaxDepth || i >= len(b) || b[i] != '[' {
		return i, errLax
	}
	return laxElements(b, i, func(vs int) (int, error) {
		end, err := laxSkip(b, vs, depth)
		if err == nil && fn != nil {
			err = fn(b[vs:end])
		}
		return end, err
	})
}
