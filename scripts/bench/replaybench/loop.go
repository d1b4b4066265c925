package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// loop is the baseline that a custom transport must beat: the plain
// net/http client a Go programmer would write, C goroutines sharing one
// http.Client (C idle connections kept), each sending the store's bodies in
// turn and reading every answer to its end, N requests in all. It prints the
// same "key value" line as stats: ok, errors, and the span from the first
// request started to the last answer read (Unix ns).
func loop(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("loop STORE URL C N")
	}
	st, err := openStore(args[0])
	if err != nil {
		return err
	}
	defer st.Close()
	url := strings.TrimSuffix(args[1], "/") + st.Meta()["path"]
	c, n := atoi(args[2]), int64(atoi(args[3]))
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: c, MaxIdleConnsPerHost: c, DisableCompression: true}}
	var next, ok, errs, last atomic.Int64
	first := time.Now().UnixNano()
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				req, _ := http.NewRequest("POST", url, bytes.NewReader(st.Payload(int(i)%st.Len())))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					errs.Add(1)
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					errs.Add(1)
					continue
				}
				ok.Add(1)
				for t := time.Now().UnixNano(); ; {
					l := last.Load()
					if t <= l || last.CompareAndSwap(l, t) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("records %d errors %d ok %d first_ns %d last_ns %d\n", ok.Load()+errs.Load(), errs.Load(), ok.Load(), first, last.Load())
	return nil
}
