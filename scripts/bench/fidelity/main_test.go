package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// TestLevelSplitsTheError: a request sent at 0, arrived 1 ms later, its
// first token due 50 ms after arrival, written 2 ms late and read 0.5 ms
// after the write: TTFT 53.5 ms, an error of 3.5 ms = send 1 + server late 2
// + read 0.5, the client's own part 1.5; the ITL is the client's gap (10.3
// ms) against the server's (10 ms).
func TestLevelSplitsTheError(t *testing.T) {
	const ms = 1_000_000
	dir := t.TempDir()
	base := int64(1_700_000_000_000_000_000)
	rec := result.Record{RequestID: "r-1", SentNS: base, FirstTokenNS: base + 53_500_000, EndNS: base + 70*ms, Status: 200,
		ChunkOffsetsNS: []int64{53_500_000, 63_800_000}}
	var b bytes.Buffer
	enc := result.NewEncoder(&b)
	if err := enc.Encode(&rec); err != nil || enc.Flush() != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "results.jsonl"), b.Bytes(), 0o644)
	i := func(v int64) string { return strconv.FormatInt(base+v, 10) }
	line := `{"id":"r-1","arrival_ns":` + i(1*ms) + `,"first_due_ns":` + i(51*ms) + `,"first_token_ns":` + i(53*ms) +
		`,"chunk_ns":[` + i(53*ms) + `,` + i(63*ms) + `],"chunk_due_ns":[` + i(51*ms) + `,` + i(61*ms) + `]}` + "\n" +
		`{"id":"other","chunk_ns":[],"chunk_due_ns":[]}` + "\n"
	os.WriteFile(filepath.Join(dir, "mock.log"), []byte(line), 0o644)
	var out bytes.Buffer
	if err := level(&out, filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "mock.log"), 50); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	f := strings.Fields(out.String())
	for k := 0; k+1 < len(f); k += 2 {
		got[f[k]] = f[k+1]
	}
	for k, want := range map[string]string{"joined": "1", "unmatched": "0", "ttft_p50": "53.500", "ttft_err_p50": "3.500",
		"send_p50": "1.000", "late_p50": "2.000", "read_p50": "0.500", "client_err_p50": "1.500", "itl_p50": "10.300",
		"srv_itl_p50": "10.000", "itl_err_p50": "0.300", "read_all_p99": "0.800", "late_all_p99": "2.000"} {
		if got[k] != want {
			t.Errorf("%s = %s, want %s\n%s", k, got[k], want, out.String())
		}
	}
}
