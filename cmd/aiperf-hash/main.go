// Command aiperf-hash prints content digests (sha256sum-compatible) and cache keys.
package main

import (
	"os"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/hashcmd"
)

func main() { os.Exit(base.Main(hashcmd.New(), os.Args)) }
