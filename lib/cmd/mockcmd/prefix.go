package mockcmd

import (
	"fmt"

	"github.com/aiperf/toolkit/lib/internal/units"
	"github.com/aiperf/toolkit/lib/mock"
	"github.com/urfave/cli/v2"
)

// engineOptions are the flags that make the mock behave like an engine's
// KV cache: a simulated prefix cache and a prefill cost per uncached token.
type engineOptions struct {
	prefixBlocks, blockBytes int
	prefill                  string
}

func engineFlags(o *engineOptions) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "prefix-cache-blocks", Usage: "simulate an LRU prefix cache of `N` blocks: usage reports cached_tokens, /metrics vLLM's prefix-cache counters (0: none)", Destination: &o.prefixBlocks},
		&cli.IntFlag{Name: "block-bytes", Value: mock.DefaultBlockBytes, Usage: "the prefix cache's block: `B` bytes of prompt text (64 is about vLLM's 16 tokens)", Destination: &o.blockBytes},
		&cli.StringFlag{Name: "prefill-per-token", Value: "0", Usage: "add `D` to the time to first token per prompt token the prefix cache did not serve", Destination: &o.prefill},
	}
}

// apply sets the engine options in cfg.
func (o *engineOptions) apply(cfg *mock.Config) error {
	if o.prefixBlocks < 0 {
		return fmt.Errorf("--prefix-cache-blocks %d: want 0 (none) or a number of blocks", o.prefixBlocks)
	}
	if o.blockBytes < 1 {
		return fmt.Errorf("--block-bytes %d: want a positive number of bytes", o.blockBytes)
	}
	d, err := units.ParseMS(o.prefill)
	if err != nil {
		return fmt.Errorf("--prefill-per-token: %v", err)
	}
	cfg.PrefixCacheBlocks, cfg.BlockBytes, cfg.PrefillPerToken = o.prefixBlocks, o.blockBytes, d
	return nil
}
