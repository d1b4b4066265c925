package tokenizecmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/stagekey/tokenizekey"
	"github.com/aiperf/toolkit/lib/ingest"
)

// failWriter accepts limit bytes, then fails every write with err.
type failWriter struct {
	limit int
	err   error
	calls int
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.limit <= 0 {
		w.calls++
		return 0, w.err
	}
	n := min(len(p), w.limit)
	w.limit -= n
	if n < len(p) {
		w.calls++
		return n, w.err
	}
	return n, nil
}

const rawTrace = `{"model":"m","messages":[{"role":"user","content":"hi"}]}
{"model":"m","messages":[{"role":"user","content":"again"}]}
`

func TestRunReadsAndWritesItsStreams(t *testing.T) {
	var out, errOut bytes.Buffer
	o := options{TokenizeRun: tokenizekey.TokenizeRun{Verbose: true, MaxLineBytes: 1 << 20}, stdin: strings.NewReader(rawTrace), stdout: &out, stderr: &errOut}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 3 || !strings.Contains(out.String(), `{"v":1,"end":true,"records":2,"settings":"aiperf-cachekey v1\n`) {
		t.Errorf("stdout:\n%s", out.String())
	}
	if !strings.HasPrefix(errOut.String(), "aiperf-tokenize: <stdin> (raw_payload): read 2 rows, kept 2, emitted 2 records") {
		t.Errorf("stderr: %s", errOut.String())
	}
}

// TestRunOutputError: a failing output is one error naming it, exit 2,
// wrapping the writer's first error, whatever the input line.
func TestRunOutputError(t *testing.T) {
	for _, werr := range []error{syscall.ENOSPC, syscall.EPIPE} {
		w := &failWriter{limit: 10, err: werr}
		o := options{TokenizeRun: tokenizekey.TokenizeRun{MaxLineBytes: 1 << 20}, stdin: strings.NewReader(rawTrace), stdout: w, stderr: &bytes.Buffer{}}
		err := run(context.Background(), o)
		var oe *ingest.OutputError
		if !errors.As(err, &oe) || !errors.Is(err, werr) || err.Error() != "write <stdout>: "+werr.Error() {
			t.Errorf("%v: got %v", werr, err)
		}
		if base.Code(err) != base.ExitTrouble || w.calls != 1 {
			t.Errorf("%v: code %d after %d failed writes, want 2 after 1", werr, base.Code(err), w.calls)
		}
	}
}

func TestRunUsage(t *testing.T) {
	for _, o := range []options{
		{TokenizeRun: tokenizekey.TokenizeRun{MaxLineBytes: 0}},
		{TokenizeRun: tokenizekey.TokenizeRun{MaxLineBytes: 10}, Tokenize: tokenizekey.Tokenize{Shard: "2/2"}},
		{TokenizeRun: tokenizekey.TokenizeRun{MaxLineBytes: 10}, Tokenize: tokenizekey.Tokenize{Start: -3}},
	} {
		o.stdin, o.stdout, o.stderr = strings.NewReader(rawTrace), &bytes.Buffer{}, &bytes.Buffer{}
		if err := run(context.Background(), o); base.Code(err) != base.ExitTrouble {
			t.Errorf("%+v: got %v (code %d), want a usage error", o, err, base.Code(err))
		}
	}
}
