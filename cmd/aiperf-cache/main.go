// Command aiperf-cache keeps packed stores in a content-addressed cache.
package main

import (
	"os"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/cachecmd"
)

func main() { os.Exit(base.Main(cachecmd.New(), os.Args)) }
