// Command fidelity holds the analysis of scripts/bench/fidelity.sh: it
// joins aiperf-replay's records with aiperf-mock --log's lines by request id
// and tells the client's timing error apart from the server's lateness.
//
//	fidelity level RESULTS MOCKLOG TTFT_MS   one line of "key value" figures for a level (ms unless named)
//	fidelity table LEVELFILE...               the Markdown table of the levels, medians of each file's lines
//
// For a request sent at S (the client's sent_unix_ns), that arrived at the
// server at A (the handler started), whose first token was due at D, written
// at W and read by the client at R:
//
//	client TTFT - set TTFT = (A - S)  +  (W - D)  +  (R - W)
//	                          send      server     read
//	                          side      lateness   side
//
// (D - A is the set TTFT exactly: the mock schedules from A.) The client's
// own error is the send side plus the read side, client TTFT minus the
// server's true one (W - A). ITL: the client's gaps between content chunks
// against the server's gaps between the writes of the same events.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/result"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: fidelity level RESULTS MOCKLOG TTFT_MS | table LEVELFILE...")
	}
	var err error
	switch os.Args[1] {
	case "level":
		if len(os.Args) != 5 {
			fail("usage: fidelity level RESULTS MOCKLOG TTFT_MS")
		}
		ttft, perr := strconv.ParseFloat(os.Args[4], 64)
		if perr != nil {
			fail("TTFT_MS: " + perr.Error())
		}
		err = level(os.Stdout, os.Args[2], os.Args[3], ttft)
	case "table":
		err = table(os.Stdout, os.Args[2:])
	default:
		fail("unknown command " + os.Args[1])
	}
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "fidelity:", msg)
	os.Exit(2)
}

// serverLine is one line of aiperf-mock --log.
type serverLine struct {
	ID       string  `json:"id"`
	Arrival  int64   `json:"arrival_ns"`
	FirstDue int64   `json:"first_due_ns"`
	First    int64   `json:"first_token_ns"`
	Chunks   []int64 `json:"chunk_ns"`
	ChunkDue []int64 `json:"chunk_due_ns"`
}

func readServer(path string) (map[string]*serverLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]*serverLine{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		l := new(serverLine)
		if err := json.Unmarshal(sc.Bytes(), l); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		m[l.ID] = l
	}
	return m, sc.Err()
}

// figures collects the samples of one level, in ns.
type figures struct {
	ttft, ttftErr, clientErr, send, read, readAll []float64
	itl, srvITL, itlErr, late, lateAll, dispatch  []float64
	joined, unmatched, failed, chunks             int
}

func level(w io.Writer, results, log string, ttftMS float64) error {
	srv, err := readServer(log)
	if err != nil {
		return err
	}
	f, err := os.Open(results)
	if err != nil {
		return err
	}
	defer f.Close()
	var g figures
	d := result.NewDecoder(f, results)
	var r result.Record
	for {
		err := d.Next(&r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		s := srv[r.RequestID]
		switch {
		case !r.OK() || r.FirstTokenNS == 0:
			g.failed++
		case s == nil || len(s.Chunks) != len(r.ChunkOffsetsNS) || len(s.ChunkDue) != len(s.Chunks):
			g.unmatched++
		default:
			g.add(&r, s, ttftMS)
		}
	}
	g.print(w)
	return nil
}

func (g *figures) add(r *result.Record, s *serverLine, ttftMS float64) {
	g.joined++
	g.chunks += len(r.ChunkOffsetsNS)
	ttft := float64(r.FirstTokenNS - r.SentNS)
	g.ttft = append(g.ttft, ttft)
	g.ttftErr = append(g.ttftErr, ttft-ttftMS*1e6)
	g.clientErr = append(g.clientErr, ttft-float64(s.First-s.Arrival))
	g.send = append(g.send, float64(s.Arrival-r.SentNS))
	g.read = append(g.read, float64(r.FirstTokenNS-s.First))
	g.late = append(g.late, float64(s.First-s.FirstDue))
	g.dispatch = append(g.dispatch, float64(r.SentNS-r.IntendedNS-r.CeilingWaitNS))
	for i, off := range r.ChunkOffsetsNS {
		g.readAll = append(g.readAll, float64(r.SentNS+off-s.Chunks[i]))
		g.lateAll = append(g.lateAll, float64(s.Chunks[i]-s.ChunkDue[i]))
		if i > 0 {
			c, v := float64(off-r.ChunkOffsetsNS[i-1]), float64(s.Chunks[i]-s.Chunks[i-1])
			g.itl, g.srvITL, g.itlErr = append(g.itl, c), append(g.srvITL, v), append(g.itlErr, c-v)
		}
	}
}

func (g *figures) print(w io.Writer) {
	ms := func(k string, v float64) string { return fmt.Sprintf("%s %.3f", k, v/1e6) }
	var out []string
	out = append(out, fmt.Sprintf("joined %d unmatched %d failed %d chunks %d", g.joined, g.unmatched, g.failed, g.chunks))
	for _, s := range []struct {
		k  string
		xs []float64
	}{{"ttft", g.ttft}, {"ttft_err", g.ttftErr}, {"client_err", g.clientErr}, {"send", g.send}, {"read", g.read},
		{"read_all", g.readAll}, {"late", g.late}, {"late_all", g.lateAll}, {"itl", g.itl}, {"srv_itl", g.srvITL}, {"itl_err", g.itlErr},
		{"dispatch", g.dispatch}} {
		slices.Sort(s.xs)
		out = append(out, ms(s.k+"_p50", q(s.xs, 0.5)), ms(s.k+"_p99", q(s.xs, 0.99)), ms(s.k+"_mean", mean(s.xs)))
	}
	out = append(out, ms("itl_sd", sd(g.itl)), ms("srv_itl_sd", sd(g.srvITL)), ms("itl_err_sd", sd(g.itlErr)))
	fmt.Fprintln(w, strings.Join(out, " "))
}

func q(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return xs[min(len(xs)-1, int(p*float64(len(xs))))]
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func sd(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m, s := mean(xs), 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

// table prints one row a level file (lines of "key value" pairs, one a
// round, the script adding "streams", "client_cpu" and "server_cpu"), each
// figure the median of the rounds.
func table(w io.Writer, files []string) error {
	fmt.Fprintln(w, "| streams | req | TTFT p50 | TTFT err p50 / mean | client err p50 / p99 | send p50 / p99 | read 1st p50 / p99 | read all p99 | server late 1st p50 / p99 | late all p99 | ITL p50 / p99 | ITL σ (server σ) | ITL err σ | client dispatch p99 | CPU client / server | CPU µs an event client / server | cores the schedule needs | sleep loop p99 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, name := range files {
		m, err := medians(name)
		if err != nil {
			return err
		}
		v := func(k string) string { return fmt.Sprintf("%.2f", m[k]) }
		p := func(k string) string { return v(k+"_p50") + " / " + v(k+"_p99") }
		fmt.Fprintf(w, "| %.0f | %.0f | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %.0f%% / %.0f%% | %.1f / %.1f | %.2f | %.2f |\n",
			m["streams"], m["joined"], v("ttft_p50"), v("ttft_err_p50"), v("ttft_err_mean"), p("client_err"), p("send"), p("read"), v("read_all_p99"),
			p("late"), v("late_all_p99"), p("itl"), v("itl_sd"), v("srv_itl_sd"), v("itl_err_sd"), v("dispatch_p99"), m["client_cpu"], m["server_cpu"], m["client_us_event"], m["server_us_event"], m["cores_needed"], m["floor_p99"])
	}
	fmt.Fprintln(w, "\nms unless marked; medians of the rounds. TTFT err = client TTFT - set TTFT = send + server late + read;")
	fmt.Fprintln(w, "client err = send + read (client TTFT - the server's true TTFT); read all: every chunk; ITL err: the client's")
	fmt.Fprintln(w, "gap - the server's gap between the same two writes; client dispatch: sent - intended (the slot freed),")
	fmt.Fprintln(w, "not in TTFT; CPU in % of one core over the level's wall time; sleep loop: the machine's wake-up lateness")
	fmt.Fprintln(w, "just before the round (a bare Go loop, 1,000 deadlines a second), the floor under every p99 here; CPU µs an")
	fmt.Fprintln(w, "event: each process's CPU over the level ÷ the content events received; cores the schedule needs: both")
	fmt.Fprintln(w, "processes' µs an event × the events a second the schedule asks for (streams × tokens ÷ (TTFT + (tokens-1) × ITL)).")
	fmt.Fprintln(w, "\nQuoted, not measured here (vllm-project/vllm-bench bench-overhead/README.md; 4-core VM, 1,000 streams, same mock settings):")
	fmt.Fprintln(w, "\n| client | TTFT error | ITL p99 | ITL σ |\n|---|---|---|---|\n| vllm-bench (Rust), quoted | 28.1 | 11.3 | 0.53 |\n| Python vLLM bench, quoted | 294.4 | 19.1 | 7.36 |")
	return nil
}

func medians(name string) (map[string]float64, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	all := map[string][]float64{}
	for n, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("%s:%d: not key value pairs", name, n+1)
		}
		for i := 0; i < len(f); i += 2 {
			x, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %v", name, n+1, f[i], err)
			}
			all[f[i]] = append(all[f[i]], x)
		}
	}
	m := map[string]float64{}
	for k, xs := range all {
		sort.Float64s(xs)
		if len(xs)%2 == 1 {
			m[k] = xs[len(xs)/2]
		} else {
			m[k] = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
		}
	}
	return m, nil
}
