// Command aiperf-pack packs tokenized records into an aiperf store file.
package main

import (
	"os"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/packcmd"
)

func main() { os.Exit(base.Main(packcmd.New(), os.Args)) }
