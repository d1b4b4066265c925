// Command membound is the hostile server of scripts/membound/run.sh: it
// answers every POST with a server-sent event stream without end (16 KiB of
// text an event) and every GET with a /metrics page of -series gauge
// series. It listens on loopback and prints its URL.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
)

func main() {
	series := flag.Int("series", 1_000_000, "series of the /metrics page")
	flag.Parse()
	var page bytes.Buffer
	page.WriteString("# TYPE s gauge\n")
	for i := range *series {
		fmt.Fprintf(&page, "s{i=\"%d\"} 1\n", i)
	}
	text := strings.Repeat("x", 16<<10)
	event := []byte(`data: {"choices":[{"index":0,"delta":{"content":"` + text + `"}}]}` + "\n\n")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write(page.Bytes())
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			if _, err := w.Write(event); err != nil {
				return
			}
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("http://%s %d\n", l.Addr(), page.Len())
	os.Stdout.Sync()
	http.Serve(l, h)
}
