// Package synthversion holds the versions of lib/synth's algorithm and
// corpus, part of every cache key's salt (cachekey.CurrentSalt). It is
// apart from lib/synth so that aiperf-hash, which keys stores, does not
// link the synthesis, its tokenizer or its embedded corpus.
package synthversion

// Whoever changes the prompts lib/synth makes bumps one of these; the
// golden pair in lib/cmd/hashcmd/testdata/golden fails, naming it, until
// then.
const (
	// Synthesis: exact-length prompts from input_length and hash_ids
	// (block layout, seeding, token choice).
	Synthesis = 1
	// Corpus: lib/synth/corpus, the text prompts are cut from, and how it
	// is prepared.
	Corpus = 1
)
