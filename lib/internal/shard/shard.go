// Package shard reads the spelling of a shard that aiperf-tokenize,
// aiperf-hash and aiperf-replay take in --shard, and that a records stream
// names in its end line: "i/N", the i-th of N (0 <= i < N).
package shard

import (
	"errors"
	"strconv"
	"strings"
)

// ErrSyntax is the error of Parse; the stages wrap it with the flag and the
// value given.
var ErrSyntax = errors.New("want i/N with 0 <= i < N")

// Parse parses "i/N" (0 <= i < N). "" is ErrSyntax: a flag given empty
// names no shard (callers that take "" as the whole trace say so first).
func Parse(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, ErrSyntax
	}
	return i, n, nil
}
