package tokenizer

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonScanner is a minimal JSON reader for the large parts of
// tokenizer.json (the vocabulary and the merges, hundreds of thousands of
// entries). encoding/json validates and scans the input several times over
// for RawMessage fields and custom unmarshalers, which made loading Qwen3
// take about 0.6 s; the small parts are still decoded with encoding/json
// from the raw bytes this scanner cuts out.
type jsonScanner struct {
	b     []byte
	i     int
	depth int
}

var errJSONDepth = errors.New("JSON nested too deeply")

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("JSON at byte %d: %s", s.i, fmt.Sprintf(format, args...))
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *jsonScanner) expect(c byte) error {
	if s.peek() != c {
		return s.errorf("want %q", c)
	}
	s.i++
	return nil
}

// str reads a string.
func (s *jsonScanner) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !utf8.Valid(raw) {
				return "", s.errorf("invalid UTF-8 in string")
			}
			return string(raw), nil
		case c == '\\':
			return s.strEscaped(start)
		case c < 0x20:
			return "", s.errorf("control character in string")
		}
		s.i++
	}
	return "", s.errorf("unterminated string")
}

func (s *jsonScanner) strEscaped(start int) (string, error) {
	out := append([]byte(nil), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if !utf8.Valid(out) {
				return "", s.errorf("invalid UTF-8 in string")
			}
			return string(out), nil
		case c < 0x20:
			return "", s.errorf("control character in string")
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			break
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", s.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A pair makes one character; a lone half becomes U+FFFD,
				// as in encoding/json.
				save := s.i
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					s.i += 2
					if r2, ok := s.hex4(); ok {
						if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
							out = utf8.AppendRune(out, c)
							continue
						}
					}
				}
				s.i = save
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", s.errorf("bad escape \\%c", e)
		}
	}
	return "", s.errorf("unterminated string")
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.b[s.i:s.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	s.i += 4
	return rune(v), true
}

// integer reads a JSON number that must be an integer.
func (s *jsonScanner) integer() (int, error) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	n, err := strconv.Atoi(string(s.b[start:s.i]))
	if err != nil {
		return 0, s.errorf("want an integer")
	}
	return n, nil
}

// skip skips one value of any kind.
func (s *jsonScanner) skip() error {
	switch c := s.peek(); c {
	case '"':
		_, err := s.str()
		return err
	case '{':
		return s.object(func(string) error { return s.skip() })
	case '[':
		return s.array(s.skip)
	case 't', 'f', 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
				s.i += len(lit)
				return nil
			}
		}
		return s.errorf("bad literal")
	default:
		start := s.i
		for s.i < len(s.b) {
			c := s.b[s.i]
			if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				s.i++
				continue
			}
			break
		}
		if _, err := strconv.ParseFloat(string(s.b[start:s.i]), 64); err != nil {
			return s.errorf("bad value")
		}
		return nil
	}
}

// raw skips one value and returns its bytes.
func (s *jsonScanner) raw() ([]byte, error) {
	s.ws()
	start := s.i
	if err := s.skip(); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

// object reads an object, calling fn for each key; fn reads the value.
func (s *jsonScanner) object(fn func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.depth++; s.depth > 1000 {
		return errJSONDepth
	}
	defer func() { s.depth-- }()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		k, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := fn(k); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or '}'")
		}
	}
}

// array reads an array, calling fn for each element.
func (s *jsonScanner) array(fn func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.depth++; s.depth > 1000 {
		return errJSONDepth
	}
	defer func() { s.depth-- }()
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or ']'")
		}
	}
}
