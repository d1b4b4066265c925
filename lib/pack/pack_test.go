package pack

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/store"
)

const all = `{"v":1,"line":1,"session_id":"a","turn":0,"timestamp_ms":0,"prompt":"one"}
{"v":1,"line":2,"session_id":"b","turn":0,"timestamp_ms":5,"prompt":"two"}
{"v":1,"line":3,"session_id":"a","turn":1,"delay_ms":100,"prompt":"three"}
{"v":1,"end":true,"records":3}
`

var opts = Options{Request: request.Options{Endpoint: request.Chat, Model: "m"}}

func run(t *testing.T, ctx context.Context, out string, o Options, ins ...string) error {
	t.Helper()
	var inputs []Input
	for i, s := range ins {
		inputs = append(inputs, Input{Name: "in" + string(rune('0'+i)), R: strings.NewReader(s)})
	}
	_, err := Run(ctx, inputs, out, o)
	return err
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

func TestShardsGiveTheSameStore(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.aipk"), filepath.Join(dir, "two.aipk")
	if err := run(t, context.Background(), one, opts, all); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(all, "\n")
	s0 := lines[0] + lines[2] + `{"v":1,"end":true,"records":2}` + "\n"
	s1 := lines[1] + `{"v":1,"end":true,"records":1}` + "\n"
	if err := run(t, context.Background(), two, opts, s1, s0); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(one)
	b, _ := os.ReadFile(two)
	if !bytes.Equal(a, b) {
		t.Fatal("sharded input gives a different store")
	}
	r, err := store.Open(one, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumSessions() != 2 || r.SessionID(0) != "a" || r.SessionLen(0) != 2 {
		t.Errorf("sessions: %d, first %q with %d turns", r.NumSessions(), r.SessionID(0), r.SessionLen(0))
	}
}

func TestRunInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, o := range []Options{opts, {Request: opts.Request, Compress: true, InputsJSON: filepath.Join(dir, "i.json")}} {
		err := run(t, ctx, filepath.Join(dir, "s.aipk"), o, all)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
		if got := names(t, dir); len(got) != 0 {
			t.Errorf("interrupted run left %v", got)
		}
	}
}

func TestCompressRoundTrip(t *testing.T) {
	dir := t.TempDir()
	plain, zst, back := filepath.Join(dir, "s.aipk"), filepath.Join(dir, "s.zst"), filepath.Join(dir, "back.aipk")
	ij := filepath.Join(dir, "i.json")
	if err := run(t, context.Background(), plain, opts, all); err != nil {
		t.Fatal(err)
	}
	o := opts
	o.Compress, o.InputsJSON = true, ij
	if err := run(t, context.Background(), zst, o, all); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(zst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Unpack(context.Background(), back, f, "s.zst"); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(back)
	if !bytes.Equal(a, b) {
		t.Fatal("unpacked store differs from the plain one")
	}
	j, _ := os.ReadFile(ij)
	if !strings.Contains(string(j), `{"session_id":"a","payloads":[{"messages":[{"role":"user","content":"one"}]`) {
		t.Errorf("inputs.json: %s", j)
	}
	if got := names(t, dir); len(got) != 4 {
		t.Errorf("directory holds %v, want the four outputs only", got)
	}
}

func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(all), 0o644)
	fi, _ := os.Stat(in)
	link := filepath.Join(dir, "link")
	os.Symlink(in, link)
	inputs := []Input{{Name: "other"}, {Name: in, Info: fi}}
	for _, c := range []struct {
		out, ij string
		bad     bool
	}{
		{filepath.Join(dir, "s.aipk"), "", false},
		{filepath.Join(dir, "s.aipk"), filepath.Join(dir, "i.json"), false},
		{in, "", true},
		{filepath.Join(dir, ".", "in.jsonl"), "", true},
		{link, "", true},
		{filepath.Join(dir, "s.aipk"), in, true},
		{filepath.Join(dir, "s.aipk"), filepath.Join(dir, "s.aipk"), true},
		{filepath.Join(dir, "s.aipk"), filepath.Join(dir, "x", "..", "s.aipk"), true},
	} {
		if err := checkOutputs(inputs, c.out, c.ij); (err != nil) != c.bad {
			t.Errorf("out %s, inputs.json %q: got %v, want error %v", c.out, c.ij, err, c.bad)
		}
	}
}

func TestRecordErrorsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ in, want string }{
		{`{"v":1,"line":1,"turn":1,"prompt":"a"}` + "\n" + `{"v":1,"end":true,"records":1}`, "in0:1: turn: store: record 0 (line 1): session 0 turn 1 added, want turn 0"},
		{`{"v":1,"line":1,"turn":0,"prompt":"a","extra":{"stream":true}}` + "\n", `in0:1: extra: member "stream" is set by the endpoint options`},
		{`{"v":1,"line":1,"session":0,"prompt":"a"}` + "\n" + `{"v":1,"line":2,"prompt":"b"}` + "\n", "in0:2: session: given on some records and not on others"},
		{`{"v":1,"line":1,"session":1,"prompt":"a"}` + "\n", "in0:1: session: 1 skips ahead"},
	} {
		err := run(t, context.Background(), filepath.Join(dir, "s.aipk"), opts, c.in)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("failed runs left %v", got)
	}
}
