// Command aiperf-tokenize turns an LLM inference trace into records JSONL.
package main

import (
	"os"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/tokenizecmd"
)

func main() { os.Exit(base.Main(tokenizecmd.New(), os.Args)) }
