package replaycmd

import (
	"errors"
	"fmt"
	"io"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/rundir"
)

// runDirs replaces each argument that is a run directory (aiperf-replay
// -o DIR) by its results file.
func runDirs(args []string) ([]string, error) { return rundir.Resolve(args) }

// checkShardsOf refuses results of shards that do not make one replay
// (rundir.CheckShards) with exit 2, naming the files, and prints its
// warnings.
func checkShardsOf(w io.Writer, files []string, runs []*result.RunInfo, allowMissing bool) error {
	warns, err := rundir.CheckShards(files, runs, allowMissing)
	var se *result.ShardError
	if errors.As(err, &se) {
		return base.UsageError("%s", se.Msg)
	}
	warnAll(w, warns)
	return err
}

// warnAll prints warnings on w, one a line.
func warnAll(w io.Writer, warnings []string) {
	for _, m := range warnings {
		fmt.Fprintf(w, "aiperf-replay: warning: %s\n", m)
	}
}

// shardServerNote is a shard's note that the server's figures count
// every shard's requests, or "".
func shardServerNote(o *options, fin *finished) string {
	if o.shard == "" || fin.smReport == nil || len(fin.smReport.Targets) == 0 {
		return ""
	}
	return fmt.Sprintf("shard %s: the server's figures count every shard's requests, the client's this shard's only (aiperf-replay report over all the shards compares like with like)", o.shard)
}
