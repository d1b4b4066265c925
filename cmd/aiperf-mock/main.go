// Command aiperf-mock is an OpenAI-compatible test server (chat, completions, SSE).
package main

import (
	"os"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/mockcmd"
)

func main() { os.Exit(base.Main(mockcmd.New(), os.Args)) }
