//go:build linux

package replaycmd

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// fakeEngine serves a vLLM prefix-cache pair moving by 10 queried and 7
// hit tokens a scrape; onScrape, when set, runs before the n-th answer.
func fakeEngine(t *testing.T, onScrape func(n int64)) string {
	var scrapes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1)
		if onScrape != nil {
			onScrape(n)
		}
		fmt.Fprintf(w, "# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total %d\n", 10*n)
		fmt.Fprintf(w, "# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total %d\n", 7*n)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// watchAgents records the process ids of the scrape agents the runs start.
func watchAgents(t *testing.T) *atomic.Int64 {
	var pid atomic.Int64
	agentStarted = func(p int) { pid.Store(int64(p)) }
	t.Cleanup(func() { agentStarted = nil })
	return &pid
}

// gone reports whether no process pid exists (the agent was reaped).
func gone(pid int64) bool {
	return errors.Is(syscall.Kill(int(pid), 0), syscall.ESRCH)
}

// The scraping runs in a child process, which is gone after the run; the
// run's exports come from its JSONL stream.
func TestScrapeAgent(t *testing.T) {
	pid := watchAgents(t)
	target := fakeEngine(t, nil)
	out := filepath.Join(t.TempDir(), "out")
	stderr, code := run(t, "--url", mockURL(t), "--server-metrics", target, "--server-metrics-interval", "20ms",
		"--rate", "200", "--request-count", "40", "-o", out, storeOf(t, false, false, false))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if pid.Load() == 0 || pid.Load() == int64(os.Getpid()) {
		t.Fatalf("no scrape agent was started (pid %d)", pid.Load())
	}
	if !gone(pid.Load()) {
		t.Errorf("scrape agent %d still exists after the run", pid.Load())
	}
	// (a loaded machine may skip a tick: that warning is no fault)
	if strings.Contains(stderr, "scrape agent") || strings.Contains(stderr, "scrapes failed") {
		t.Errorf("warnings:\n%s", stderr)
	}
	if !strings.Contains(stderr, "prefix-cache hit rate    70.0% (") {
		t.Errorf("no server hit rate:\n%s", stderr)
	}
	for _, f := range []string{"server_metrics_export.jsonl", "server_metrics_export.json", "server_metrics_export.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// An agent killed mid-run is a warning and a gap: the run completes, and
// its exports hold the scrapes made before.
func TestScrapeAgentKilled(t *testing.T) {
	pid := watchAgents(t)
	target := fakeEngine(t, func(n int64) {
		if n == 3 { // the first periodic scrapes are in: kill the agent mid-scrape
			syscall.Kill(int(pid.Load()), syscall.SIGKILL)
		}
	})
	out := filepath.Join(t.TempDir(), "out")
	stderr, code := run(t, "--url", mockURL(t), "--server-metrics", target, "--server-metrics-interval", "20ms",
		"--rate", "200", "--request-count", "40", "-o", out, storeOf(t, false, false, false))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "warning: server metrics: the scrape agent it ended badly (signal: killed)") {
		t.Errorf("no warning of the killed agent:\n%s", stderr)
	}
	if !gone(pid.Load()) {
		t.Errorf("scrape agent %d still exists after the run", pid.Load())
	}
	b, err := os.ReadFile(filepath.Join(out, "server_metrics_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"vllm:prefix_cache_hits_total"`) {
		t.Errorf("the export lacks the scrapes made before the kill:\n%s", b)
	}
}

// An agent that cannot start is a warning: the run goes on without
// server metrics.
func TestScrapeAgentNotStarted(t *testing.T) {
	t.Setenv(agentEnv, "1")
	out := filepath.Join(t.TempDir(), "out")
	stderr, code := run(t, "-q", "--url", mockURL(t), "--server-metrics", fakeEngine(t, nil),
		"--request-count", "4", "-o", out, storeOf(t, false, false, false))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "warning: server metrics: the scrape agent did not start (a scrape agent starts no agent of its own)") {
		t.Errorf("no warning:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "server_metrics_export.jsonl")); err == nil {
		t.Errorf("a JSONL stream without an agent")
	}
}
