package main

// The helpers that make the throughput comparison of replay.sh fair: one
// server for both clients that sends the same bytes to each, one span
// definition (first send or first accepted connection, to last completion),
// and one CPU figure (the client's whole-process CPU time over that span).

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// vstats reads `vegeta encode -to csv` output (timestamp ns, code, latency
// ns, ...) and prints the fields stats prints for records that vegeta has:
// the count, the successes, and the span from the first request's
// timestamp (taken before vegeta's client dials or writes) to the last
// completion (timestamp + latency, the whole body read).
func vstats(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("vstats CSV")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	v, err := vegetaSpan(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: %v", args[0], err)
	}
	fmt.Printf("records %d errors %d ok %d first_ns %d last_ns %d\n", v.n, v.errs, v.ok, v.first, v.last)
	return nil
}

type span struct{ n, ok, errs, first, last int64 }

// vegetaSpan reads vegeta's CSV results: a result is a success when it has
// no error and a 2xx code; the span runs from the earliest timestamp to the
// latest timestamp + latency.
func vegetaSpan(rd io.Reader) (span, error) {
	r := csv.NewReader(rd)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	var v span
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return v, nil
		}
		if err != nil {
			return v, err
		}
		if len(rec) < 6 {
			return v, fmt.Errorf("row %d: %d fields", v.n+1, len(rec))
		}
		ts, err1 := strconv.ParseInt(rec[0], 10, 64)
		code, err2 := strconv.Atoi(rec[1])
		lat, err3 := strconv.ParseInt(rec[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return v, fmt.Errorf("row %d: bad timestamp, code or latency", v.n+1)
		}
		v.n++
		if rec[5] != "" || code < 200 || code > 299 {
			v.errs++
		} else {
			v.ok++
		}
		if v.first == 0 || ts < v.first {
			v.first = ts
		}
		v.last = max(v.last, ts+lat)
	}
}

// capture posts the store's first body to URL and writes the response body
// (the raw SSE stream) to OUT.
func capture(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("capture STORE URL OUT")
	}
	st, err := openStore(args[0])
	if err != nil {
		return err
	}
	defer st.Close()
	url := strings.TrimSuffix(args[1], "/") + st.Meta()["path"]
	resp, err := http.Post(url, "application/json", bytes.NewReader(st.Payload(0)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return fmt.Errorf("capture: HTTP %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return os.WriteFile(args[2], b, 0o644)
}

// serve answers every POST with the stream in STREAM, written the way
// aiperf-mock writes it: headers flushed first, then one write and flush per
// event up to the event with a finish reason, which goes out with the rest
// (usage, [DONE]) in one last write. The body is read whole first. It is
// the bare server of replay.sh: the same bytes for every request and every
// client, and less server CPU than aiperf-mock (no JSON parse, no prompt
// tokenizing), so more of the 2 shared cores is left to the clients.
//
// SIGUSR1 prints "first_accept_ns N conns N requests N" (since the last
// SIGUSR1) on stdout and starts a new count: the time the first connection
// of a run was accepted, for clients (aiperf-replay) that dial before their
// own clock starts.
func serve(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("serve STREAM")
	}
	raw, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	writes, err := splitStream(raw)
	if err != nil {
		return fmt.Errorf("%s: %v", args[0], err)
	}
	var firstAccept, conns, requests atomic.Int64
	srv := &http.Server{
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				firstAccept.CompareAndSwap(0, time.Now().UnixNano())
				conns.Add(1)
			}
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				http.Error(w, "POST only", http.StatusMethodNotAllowed)
				return
			}
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				return
			}
			h := w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			rc := http.NewResponseController(w)
			if rc.Flush() != nil {
				return
			}
			for _, b := range writes {
				if _, err := w.Write(b); err != nil {
					return
				}
				if rc.Flush() != nil {
					return
				}
			}
			requests.Add(1)
		}),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s\n", ln.Addr())
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			fmt.Printf("first_accept_ns %d conns %d requests %d\n", firstAccept.Swap(0), conns.Swap(0), requests.Swap(0))
		}
	}()
	return srv.Serve(ln)
}

// splitStream cuts an SSE stream into the writes serve makes: one an event
// up to the event with a finish reason, which goes with the rest.
func splitStream(raw []byte) ([][]byte, error) {
	var writes [][]byte
	for len(raw) > 0 {
		i := bytes.Index(raw, []byte("\n\n"))
		if i < 0 {
			return nil, fmt.Errorf("the stream does not end with a blank line")
		}
		ev := raw[:i+2]
		if bytes.Contains(ev, []byte(`"finish_reason":"`)) {
			return append(writes, raw), nil
		}
		writes = append(writes, ev)
		raw = raw[i+2:]
	}
	return writes, nil
}

// cpuwatch runs CMD and samples its CPU time (user + system, every thread)
// every 10 ms: each line of OUT is "unix_ns cpu_ns". The samples sum the
// threads' /proc/PID/task/*/schedstat run times (nanoseconds); the last
// line, at exit, is the process's rusage (which counts exited threads too).
// Go programs keep their threads to the end, so the sum is the process's
// CPU time until it exits.
// It exits with CMD's status.
func cpuwatch(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return fmt.Errorf("cpuwatch OUT -- CMD [ARG]")
	}
	out, err := os.Create(args[0])
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	cmd := exec.Command(args[2], args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tasks := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "task")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var werr error
	var prev int64
	for {
		// A sum below the last one means threads are exiting with the
		// process (their time leaves task/): such a sample is dropped.
		if ns, ok := schedstat(tasks); ok && ns >= prev {
			fmt.Fprintf(w, "%d %d\n", time.Now().UnixNano(), ns)
			prev = ns
		}
		select {
		case werr = <-done:
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			fmt.Fprintf(w, "%d %d\n", time.Now().UnixNano(), ru.Utime.Nano()+ru.Stime.Nano())
			if err := w.Flush(); err != nil {
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
			if werr != nil {
				if ee, ok := werr.(*exec.ExitError); ok {
					os.Exit(ee.ExitCode())
				}
				return werr
			}
			return nil
		case <-tick.C:
		}
	}
}

// schedstat sums the run time (ns) of the threads under a /proc task
// folder; ok is false once the process is gone.
func schedstat(dir string) (int64, bool) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return 0, false
	}
	var sum int64
	buf := make([]byte, 128)
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited meanwhile
		}
		n, _ := f.Read(buf)
		f.Close()
		field, _, _ := strings.Cut(string(buf[:n]), " ")
		v, err := strconv.ParseInt(field, 10, 64)
		if err == nil {
			sum += v
		}
	}
	return sum, true
}

// cpuspan prints the CPU ns that the sampled process spent between FROM and
// TO (Unix ns), interpolating linearly between the samples around each end,
// and its whole-process total: "span_cpu_ns N total_cpu_ns N".
func cpuspan(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("cpuspan SAMPLES FROM TO")
	}
	from, err1 := strconv.ParseInt(args[1], 10, 64)
	to, err2 := strconv.ParseInt(args[2], 10, 64)
	if err1 != nil || err2 != nil || to < from {
		return fmt.Errorf("cpuspan: bad span %s %s", args[1], args[2])
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	var ts, cpu []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, b, ok := strings.Cut(sc.Text(), " ")
		t, err1 := strconv.ParseInt(a, 10, 64)
		c, err2 := strconv.ParseInt(b, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("%s: bad sample %q", args[0], sc.Text())
		}
		ts, cpu = append(ts, t), append(cpu, c)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	c, err := spanCPU(ts, cpu, from, to)
	if err != nil {
		return fmt.Errorf("%s: %v", args[0], err)
	}
	fmt.Printf("span_cpu_ns %.0f total_cpu_ns %d\n", c, cpu[len(cpu)-1])
	return nil
}

// spanCPU is the CPU time between from and to of samples (ts[i], cpu[i]),
// interpolated linearly between the samples around each end.
func spanCPU(ts, cpu []int64, from, to int64) (float64, error) {
	if len(ts) < 2 || from < ts[0] || to > ts[len(ts)-1] {
		return 0, fmt.Errorf("the samples do not cover the span")
	}
	at := func(t int64) float64 {
		i := 1
		for i < len(ts)-1 && ts[i] < t {
			i++
		}
		if ts[i] == ts[i-1] {
			return float64(cpu[i])
		}
		return float64(cpu[i-1]) + float64(cpu[i]-cpu[i-1])*float64(t-ts[i-1])/float64(ts[i]-ts[i-1])
	}
	return at(to) - at(from), nil
}
