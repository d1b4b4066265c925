// Command aiperf-replay replays a store against an OpenAI-compatible endpoint and reports latency metrics.
package main

import (
	"os"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/replaycmd"
)

func main() { os.Exit(base.Main(replaycmd.New(), os.Args)) }
