package tokenizer

import "unicode/utf8"

// GPT-2's byte-level alphabet: every byte gets a printable rune so that
// byte strings can be stored as text in vocab files. Printable Latin-1
// bytes map to themselves; the other 68 bytes map to U+0100..U+0143 in
// byte order.
var (
	byteToRune [256]rune
	// runeToByte is indexed by rune; -1 marks runes outside the alphabet.
	runeToByte [0x144]int16
)

func init() {
	for i := range runeToByte {
		runeToByte[i] = -1
	}
	n := rune(0)
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		r := rune(b)
		if !printable {
			r = 0x100 + n
			n++
		}
		byteToRune[b] = r
		runeToByte[r] = int16(b)
	}
}

// byteLevelDecode maps a string written in the byte-level alphabet back to
// raw bytes. ok is false when some rune is outside the alphabet.
func byteLevelDecode(s string) (b []byte, ok bool) {
	return appendByteLevelDecode(make([]byte, 0, len(s)), s)
}

// appendByteLevelDecode is byteLevelDecode appending to dst.
func appendByteLevelDecode(dst []byte, s string) ([]byte, bool) {
	for _, r := range s {
		if r >= rune(len(runeToByte)) || runeToByte[r] < 0 {
			return nil, false
		}
		dst = append(dst, byte(runeToByte[r]))
	}
	return dst, true
}

// byteLevelEncode writes raw bytes in the byte-level alphabet.
func byteLevelEncode(b []byte) string {
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = utf8.AppendRune(out, byteToRune[c])
	}
	return string(out)
}

// appendLossyUTF8 appends b to dst, replacing each maximal invalid
// subsequence with U+FFFD, which is what Rust's String::from_utf8_lossy
// does (and Hugging Face's byte-level decoder with it). Go's own
// conversions replace every invalid byte separately, so they disagree on
// truncated multi-byte sequences.
func appendLossyUTF8(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			dst = append(dst, b[i:i+size]...)
			i += size
			continue
		}
		// Invalid: skip the longest prefix of a well-formed sequence.
		i += invalidPrefixLen(b[i:])
		dst = append(dst, "\uFFFD"...)
	}
	return dst
}

// invalidPrefixLen returns how many bytes at the start of b form the
// maximal prefix of a well-formed UTF-8 sequence (at least 1), per the
// Unicode "substitution of maximal subparts" practice.
func invalidPrefixLen(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		x := b[n]
		if x < lo || x > hi {
			break
		}
		lo, hi = 0x80, 0xBF
		n++
	}
	return n
}
