// Command replaybench holds the helpers of scripts/bench/replay.sh:
//
//	replaybench records N BYTES TOKENS    records JSONL (N chat turns of ~BYTES of text, TOKENS max tokens)
//	replaybench targets STORE URL          vegeta JSON targets with the store's bodies, in order
//	replaybench bare STORE URL N           a bare net/http client: N sequential streamed requests, prints each TTFT in ns
//	                                       (from the moment it holds a connection, as aiperf-replay's sent time)
//	replaybench stats RECORDS...           count, req/s, median TTFT, p99 send lateness (ns) of records files,
//	                                       the span (first send, last end) in Unix ns, and the reads (that
//	                                       returned bytes) a response took
//	replaybench vstats CSV                 the same count and span of a vegeta results file (`vegeta encode -to csv`)
//	replaybench ticker RATE DURATION       the machine's floor: a bare Go loop that sleeps to RATE deadlines a
//	                                       second and sends nothing; prints the p50, p99 and max of its lateness (ns)
//	replaybench capture STORE URL OUT      POST the store's first body to URL, write the response body to OUT
//	replaybench serve STREAM               a bare SSE server on 127.0.0.1 (URL on stdout) answering every POST with STREAM
//	replaybench cpuwatch OUT -- CMD...     run CMD, sample its whole-process CPU time every 10 ms into OUT
//	replaybench cpuspan SAMPLES FROM TO    CPU ns of the process in SAMPLES between Unix ns FROM and TO (interpolated)
//	replaybench floor STORE URL C N        the least client (Linux): C connections, one epoll thread, N requests
//	replaybench uring STORE URL C N        the same on io_uring (Linux 6.0+): multishot receives, one enter a batch
//	replaybench loop STORE URL C N         a plain net/http http.Client loop: C goroutines, N requests in all, each
//	                                       body read to its end; prints ok, errors and the span (loop.go)
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: replaybench records|targets|bare|stats ...")
	}
	var err error
	switch os.Args[1] {
	case "records":
		err = records(os.Args[2:])
	case "targets":
		err = targets(os.Args[2:])
	case "bare":
		err = bare(os.Args[2:])
	case "stats":
		err = stats(os.Args[2:])
	case "ticker":
		err = ticker(os.Args[2:])
	case "vstats":
		err = vstats(os.Args[2:])
	case "capture":
		err = capture(os.Args[2:])
	case "serve":
		err = serve(os.Args[2:])
	case "cpuwatch":
		err = cpuwatch(os.Args[2:])
	case "cpuspan":
		err = cpuspan(os.Args[2:])
	case "floor":
		err = floor(os.Args[2:])
	case "uring":
		err = uringFloor(os.Args[2:])
	case "loop":
		err = loop(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "replaybench:", msg)
	os.Exit(2)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail(err.Error())
	}
	return n
}

var words = strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no will more out up into do any your what has man could other than then its time only some them may these like")

func records(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("records N BYTES TOKENS")
	}
	n, size, tokens := atoi(args[0]), atoi(args[1]), atoi(args[2])
	r := rand.New(rand.NewPCG(1, 2))
	w := bufio.NewWriter(os.Stdout)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "request %d:", i)
		for b.Len() < size {
			b.WriteString(" " + words[r.IntN(len(words))])
		}
		msg, _ := json.Marshal([]map[string]string{{"role": "user", "content": b.String()}})
		fmt.Fprintf(w, `{"v":1,"line":%d,"session_id":"s%d","turn":0,"input_tokens":%d,"max_tokens":%d,"messages":%s}`+"\n", i+1, i, size/4, tokens, msg)
	}
	fmt.Fprintf(w, `{"v":1,"end":true,"records":%d}`+"\n", n)
	return w.Flush()
}

func openStore(path string) (*store.Reader, error) {
	return store.Open(path, store.DefaultOpenOptions())
}

func targets(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("targets STORE URL")
	}
	st, err := openStore(args[0])
	if err != nil {
		return err
	}
	defer st.Close()
	url := strings.TrimSuffix(args[1], "/") + st.Meta()["path"]
	w := bufio.NewWriter(os.Stdout)
	for i := range st.Len() {
		t := map[string]any{
			"method": "POST", "url": url,
			"body":   base64.StdEncoding.EncodeToString(st.Payload(i)),
			"header": map[string][]string{"Content-Type": {"application/json"}},
		}
		b, _ := json.Marshal(t)
		w.Write(b)
		w.WriteByte('\n')
	}
	return w.Flush()
}

// bare sends the store's bodies one at a time with net/http and prints, per
// request, the nanoseconds from the moment the request holds a connection
// (httptrace GotConn: the point where aiperf-replay takes its sent time,
// after its pool hands it a connection and before the request is written)
// to the first data line that carries content.
func bare(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("bare STORE URL N")
	}
	st, err := openStore(args[0])
	if err != nil {
		return err
	}
	defer st.Close()
	url := strings.TrimSuffix(args[1], "/") + st.Meta()["path"]
	n := atoi(args[2])
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for i := range n {
		body := st.Payload(i % st.Len())
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		var t0 time.Time
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { t0 = time.Now() },
		}))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		var ttft time.Duration
		for {
			line, err := br.ReadSlice('\n')
			if ttft == 0 && bytes.HasPrefix(line, []byte("data: {")) && bytes.Contains(line, []byte(`"content":"`)) {
				ttft = time.Since(t0)
			}
			if err != nil {
				break
			}
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Fprintln(out, int64(ttft))
	}
	return nil
}

func stats(files []string) error {
	var ttft, late []float64
	var n, errs, ok, reads int64
	var first, last int64
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		d := result.NewDecoder(f, name)
		var r result.Record
		for {
			err := d.Next(&r)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			n++
			if r.Err != nil {
				errs++
			} else if r.Status >= 200 && r.Status <= 299 {
				ok++
			}
			if first == 0 || r.SentNS < first {
				first = r.SentNS
			}
			last = max(last, r.EndNS)
			late = append(late, float64(r.SentNS-r.IntendedNS))
			if r.FirstTokenNS > 0 {
				ttft = append(ttft, float64(r.FirstTokenNS-r.SentNS))
			}
			if r.HTTP != nil {
				reads += r.HTTP.ChunksReceived
			}
		}
		f.Close()
	}
	slices.Sort(ttft)
	slices.Sort(late)
	q := func(xs []float64, p float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		return xs[min(len(xs)-1, int(p*float64(len(xs))))]
	}
	fmt.Printf("records %d errors %d req_per_s %.1f ttft_p50_ns %.0f late_p50_ns %.0f late_p99_ns %.0f late_max_ns %.0f ok %d first_ns %d last_ns %d reads_per_request %.2f\n",
		n, errs, float64(n)/(float64(last-first)/1e9), q(ttft, 0.5), q(late, 0.5), q(late, 0.99), q(late, 1), ok, first, last, float64(reads)/float64(max(n, 1)))
	return nil
}

// ticker is the scheduling noise floor of the machine at the moment: how
// late a Go program that does nothing else wakes for deadlines at a
// constant rate (time.Sleep to each one, as a naive client would).
func ticker(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("ticker RATE DURATION")
	}
	rate, err := strconv.ParseFloat(args[0], 64)
	if err != nil || rate <= 0 {
		return fmt.Errorf("rate %q", args[0])
	}
	d, err := time.ParseDuration(args[1])
	if err != nil {
		return err
	}
	gap := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	var late []float64
	for at := start; at.Sub(start) < d; at = at.Add(gap) {
		if w := time.Until(at); w > 0 {
			time.Sleep(w)
		}
		late = append(late, float64(time.Since(at)))
	}
	slices.Sort(late)
	q := func(p float64) float64 { return late[min(len(late)-1, int(p*float64(len(late))))] }
	fmt.Printf("ticks %d late_p50_ns %.0f late_p99_ns %.0f late_max_ns %.0f\n", len(late), q(0.5), q(0.99), q(1))
	return nil
}
