package cachekey

import (
	"github.com/aiperf/toolkit/lib/pack/compressversion"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/request/bodyversion"
	"github.com/aiperf/toolkit/lib/synth/synthversion"
	"github.com/aiperf/toolkit/lib/trace/traceversion"
)

// StoreVersion is the store file format version lib/store writes
// (store.FormatVersion; lib/cmd/hashcmd's TestStoreVersion checks they
// agree: this package may not link the store). 2: the optional hashes
// section; 3: the bodies section of block-form records (a store without
// either is still written as version 1). Every store's key changes with it.
const StoreVersion = 3

// CurrentSalt returns the salt of every cache key this build makes: the
// records format's version, the store format's, and the version of each
// algorithm that shapes a store's bytes, each defined beside its
// algorithm (lib/trace/traceversion, lib/synth/synthversion,
// lib/request/bodyversion, lib/pack/compressversion).
func CurrentSalt() Salt {
	return Salt{
		Records: record.Version,
		Store:   StoreVersion,
		Algorithms: map[string]int{
			"trace":     traceversion.Version,
			"synthesis": synthversion.Synthesis,
			"corpus":    synthversion.Corpus,
			"body":      bodyversion.Version,
			"compress":  compressversion.Version,
		},
	}
}
