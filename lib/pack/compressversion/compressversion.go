// Package compressversion holds the version of lib/pack's --compress
// stream, part of every cache key's salt (cachekey.CurrentSalt). It is
// apart from lib/pack so that aiperf-hash, which keys stores, links neither
// the pack pipeline nor zstd.
package compressversion

// Version is the version of the zstd stream of --compress (lib/pack's
// compress.go: the encoder, its level and the library version writing
// it). Whoever changes its bytes bumps it; the golden pair in
// lib/cmd/hashcmd/testdata/golden fails, naming it, until then.
const Version = 1
