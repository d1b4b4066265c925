package digest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// The checksum list format of GNU coreutils' sha256sum (checked against
// coreutils 9.1):
//
//   - it prints "HEX  NAME\n"; when NAME holds a backslash, a newline or a
//     carriage return, the line starts with a backslash and NAME is written
//     with those three escaped as \\, \n and \r;
//   - its -c reads lines "HEX  NAME", "HEX *NAME" (binary mode, the same
//     bytes on POSIX), "HEX NAME" (the BSD "reversed" form, allowed only if
//     the first such line of the list is in that form) and the tagged
//     "SHA256 (NAME) = HEX", each with optional leading blanks, an optional
//     leading backslash that turns on unescaping, hex in either case, and a
//     "\n" or "\r\n" end; lines starting with '#' and empty lines are
//     skipped;
//   - its -c prints "NAME: OK", escaping NAME (with a leading backslash)
//     only when it holds a newline.
//
// One deliberate difference: a line whose name holds a NUL byte is
// improperly formatted here (coreutils cuts the name at the NUL).

// FormatLine returns the line sha256sum prints for the digest s of name.
func FormatLine(s Sum, name string) string {
	if strings.ContainsAny(name, "\\\n\r") {
		return "\\" + s.String() + "  " + escapeName(name) + "\n"
	}
	return s.String() + "  " + name + "\n"
}

// CheckName returns name as sha256sum -c prints it before ": OK".
func CheckName(name string) string {
	if strings.ContainsRune(name, '\n') {
		return "\\" + escapeName(name)
	}
	return name
}

var nameEscaper = strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r")

func escapeName(name string) string { return nameEscaper.Replace(name) }

// unescapeName undoes escapeName; only \\, \n and \r may appear escaped.
func unescapeName(b []byte) ([]byte, bool) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i++; i == len(b) {
			return nil, false
		}
		switch b[i] {
		case '\\':
			out = append(out, '\\')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		default:
			return nil, false
		}
	}
	return out, true
}

// ErrListFormat marks a line of a checksum list that is not in any of the
// accepted forms; [ListReader.Next] returns it with the line's number.
var ErrListFormat = errors.New("improperly formatted SHA256 checksum line")

// maxListLine bounds one line of a checksum list (a name is at most 4096
// bytes on Linux, twice that escaped).
const maxListLine = 64 << 10

// ListEntry is one checksum line.
type ListEntry struct {
	Line int // 1-based
	Sum  Sum
	Name string
}

// ListReader reads a sha256sum checksum list.
type ListReader struct {
	br       *bufio.Reader
	line     int
	reversed int  // -1 not yet known, 0 standard form, 1 BSD reversed form
	stdin    bool // the list is standard input, so a name "-" cannot be checked
}

// NewListReader reads a list from r; fromStdin tells that r is standard
// input, where a line naming "-" is improperly formatted (as in sha256sum).
func NewListReader(r io.Reader, fromStdin bool) *ListReader {
	return &ListReader{br: bufio.NewReaderSize(r, 64<<10), reversed: -1, stdin: fromStdin}
}

// Next returns the next checksum line. For an improperly formatted one it
// returns an entry with only Line set and ErrListFormat, and the caller may
// go on; at the end it returns io.EOF.
func (l *ListReader) Next() (ListEntry, error) {
	for {
		line, err := l.readLine()
		if err != nil {
			return ListEntry{}, err
		}
		l.line++
		if line == nil {
			return ListEntry{Line: l.line}, ErrListFormat // too long
		}
		if len(line) > 0 && line[0] == '#' {
			continue
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		s, name, ok := l.parse(line)
		if !ok || (l.stdin && name == "-") {
			return ListEntry{Line: l.line}, ErrListFormat
		}
		return ListEntry{Line: l.line, Sum: s, Name: name}, nil
	}
}

// readLine returns the next line with its newline (the last one may lack
// it), nil for a line longer than maxListLine (which it skips), or io.EOF.
func (l *ListReader) readLine() ([]byte, error) {
	var buf []byte
	for {
		frag, err := l.br.ReadSlice('\n')
		if len(buf)+len(frag) <= maxListLine {
			buf = append(buf, frag...)
		} else {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = l.br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, nil
		}
		switch {
		case err == nil:
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(buf) > 0:
			return buf, nil
		default:
			return nil, err
		}
	}
}

func white(c byte) bool { return c == ' ' || c == '\t' }

const tag = "SHA256"

// parse splits one line (without its end) the way coreutils' split_3 does.
func (l *ListReader) parse(s []byte) (Sum, string, bool) {
	i := 0
	for i < len(s) && white(s[i]) {
		i++
	}
	escaped := false
	if i < len(s) && s[i] == '\\' {
		i++
		escaped = true
	}
	if bytes.HasPrefix(s[i:], []byte(tag)) {
		i += len(tag)
		if i < len(s) && s[i] == ' ' {
			i++
		}
		if i < len(s) && s[i] == '(' {
			return parseTagged(s[i+1:], escaped)
		}
		return Sum{}, "", false
	}
	// hex, one blank, at least one byte of name; one more byte when the
	// line goes on with a second backslash (coreutils' length rule).
	need := 2*len(Sum{}) + 2
	if i < len(s) && s[i] == '\\' {
		need++
	}
	if len(s)-i < need {
		return Sum{}, "", false
	}
	hexDigits := s[i : i+64]
	i += 64
	if !white(s[i]) {
		return Sum{}, "", false
	}
	i++
	sum, err := ParseSum(string(hexDigits))
	if err != nil {
		return Sum{}, "", false
	}
	if len(s)-i == 1 || (s[i] != ' ' && s[i] != '*') {
		if l.reversed == 0 {
			return Sum{}, "", false
		}
		l.reversed = 1
	} else if l.reversed != 1 {
		l.reversed = 0
		i++
	}
	name, ok := finishName(s[i:], escaped)
	return sum, name, ok
}

// parseTagged parses "NAME) = HEX", the rest of a tagged line: the name
// ends at the last ')'.
func parseTagged(s []byte, escaped bool) (Sum, string, bool) {
	j := bytes.LastIndexByte(s, ')')
	if j < 0 {
		return Sum{}, "", false
	}
	name, ok := finishName(s[:j], escaped)
	if !ok {
		return Sum{}, "", false
	}
	i := j + 1
	for i < len(s) && white(s[i]) {
		i++
	}
	if i == len(s) || s[i] != '=' {
		return Sum{}, "", false
	}
	i++
	for i < len(s) && white(s[i]) {
		i++
	}
	sum, err := ParseSum(string(s[i:]))
	if err != nil {
		return Sum{}, "", false
	}
	return sum, name, true
}

func finishName(b []byte, escaped bool) (string, bool) {
	if escaped {
		var ok bool
		if b, ok = unescapeName(b); !ok {
			return "", false
		}
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", false
	}
	return string(b), true
}
