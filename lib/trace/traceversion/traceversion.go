// Package traceversion holds the version of lib/trace's algorithm, part of
// every cache key's salt (cachekey.CurrentSalt). It is apart from lib/trace
// so that the binaries that key stores without reading traces (aiperf-pack)
// do not link the trace readers.
package traceversion

// Version is the version of how trace rows become records (the fields
// read, verbatim inputs re-emitted compact on one line, offsets, caps), and
// the records stream around them. Whoever changes the records lib/trace
// makes from a trace bumps it; the golden pair in
// lib/cmd/hashcmd/testdata/golden fails, naming it, until then. 2: the end
// line carries the settings of aiperf-tokenize (lib/cmd/stagekey's
// settings.go). 3: records of rows with hash_ids carry them and the block
// size (pack keeps them in the store). 4: single_turn sessions are sent as
// stored (their context_mode).
const Version = 4
