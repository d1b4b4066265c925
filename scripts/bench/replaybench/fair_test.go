package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestSpanCPUInterpolatesAtBothEnds(t *testing.T) {
	ts := []int64{0, 10, 20, 30}
	cpu := []int64{0, 100, 100, 400} // busy, idle, busy at 30 a unit
	for _, c := range []struct {
		from, to int64
		want     float64
	}{
		{0, 30, 400},
		{5, 25, 50 + 0 + 150}, // half of the first sample gap, all of the idle one, half of the last
		{10, 20, 0},
		{12, 12, 0},
	} {
		got, err := spanCPU(ts, cpu, c.from, c.to)
		if err != nil || got != c.want {
			t.Errorf("spanCPU(%d, %d) = %v, %v; want %v", c.from, c.to, got, err, c.want)
		}
	}
	if _, err := spanCPU(ts, cpu, -1, 30); err == nil {
		t.Error("a span starting before the first sample was accepted")
	}
	if _, err := spanCPU(ts, cpu, 0, 31); err == nil {
		t.Error("a span ending after the last sample was accepted")
	}
}

func TestVegetaSpanRunsFromFirstStartToLastCompletion(t *testing.T) {
	// timestamp ns, code, latency ns, bytes out, bytes in, error, body, ...
	csv := "1000,200,500,10,0,,,,0,POST,u,\n" +
		"900,200,50,10,0,,,,1,POST,u,\n" + // earliest start
		"1200,200,800,10,0,,,,2,POST,u,\n" + // latest end: 2000
		"1300,500,10,10,0,500 Internal Server Error,,,3,POST,u,\n" +
		"1400,0,10,10,0,dial tcp: refused,,,4,POST,u,\n"
	v, err := vegetaSpan(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	if want := (span{n: 5, ok: 3, errs: 2, first: 900, last: 2000}); v != want {
		t.Errorf("got %+v, want %+v", v, want)
	}
	if _, err := vegetaSpan(strings.NewReader("x,200,1,1,1,\n")); err == nil {
		t.Error("a bad timestamp was accepted")
	}
}

func TestSplitStreamSendsTheTailInOneWrite(t *testing.T) {
	raw := "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{}}\n\n" +
		"data: [DONE]\n\n"
	w, err := splitStream([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 3 || !bytes.HasPrefix(w[2], []byte(`data: {"choices":[{"delta":{},"finish_reason":"length"`)) ||
		!bytes.HasSuffix(w[2], []byte("data: [DONE]\n\n")) {
		t.Errorf("writes %q", w)
	}
	if string(bytes.Join(w, nil)) != raw {
		t.Error("the writes do not add up to the stream")
	}
	if _, err := splitStream([]byte("data: x\n")); err == nil {
		t.Error("a stream without its blank line was accepted")
	}
}
