package aiperf_test

import (
	"strconv"

	"github.com/aiperf/toolkit/lib/mock"
	"github.com/rogpeppe/go-internal/testscript"
)

// prefixmock VAR BLOCKS BLOCK-BYTES starts an aiperf-mock without latency
// that simulates a prefix cache of BLOCKS blocks of BLOCK-BYTES bytes
// (--prefix-cache-blocks, --block-bytes; no tokenizer: 4 bytes a token)
// on a free loopback port for the rest of the script and sets $VAR to its
// URL.
func cmdPrefixMock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: prefixmock VAR BLOCKS BLOCK-BYTES")
	}
	blocks, err := strconv.Atoi(args[1])
	ts.Check(err)
	bb, err := strconv.Atoi(args[2])
	ts.Check(err)
	url, stop, err := startMock(mock.Config{Fast: true, PrefixCacheBlocks: blocks, BlockBytes: bb})
	ts.Check(err)
	ts.Defer(stop)
	ts.Setenv(args[0], url)
}
