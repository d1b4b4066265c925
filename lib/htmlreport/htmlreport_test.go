package htmlreport

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// charts is the number of charts a page holds.
const charts = 10

// page summarizes and collects records as aiperf-replay report does, and
// returns the page.
func page(t testing.TB, recs []result.Record, o metrics.Options, p Page) []byte {
	t.Helper()
	col, err := NewCollector(o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		col.Add(&recs[i])
	}
	s, err := metrics.Summarize(metrics.FromRecords(recs), o)
	if err != nil {
		t.Fatal(err)
	}
	p.Summary = s
	var b bytes.Buffer
	if err := Write(&b, p, col); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readRecords(t *testing.T, name string) []result.Record {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := result.NewDecoder(f, name)
	var out []result.Record
	for {
		var r result.Record
		err := dec.Next(&r)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

// TestGolden: the page of a tiny records file (six answers, two failures,
// a warmup request) is testdata/tiny.html; -update rewrites it.
func TestGolden(t *testing.T) {
	recs := readRecords(t, "testdata/tiny.jsonl")
	got := page(t, recs, metrics.Options{Streaming: true}, Page{Sources: []string{"tiny.jsonl"}, RunID: "golden",
		Warnings: []string{"shard 1/2 <b>: the clock is not synchronized"},
		Notes:    []string{"the store the records name (s.aipk) is at other/s.aipk, by its sha256"},
		Texts: []Text{
			{Title: "Server metrics", Body: "Server metrics http://127.0.0.1:1/metrics (vllm): 4 scrapes\n  requests running  avg 2  max 4\n"},
			{Title: "Shards", Body: ""}, // an empty part has no heading
		}})
	golden := filepath.Join("testdata", "tiny.html")
	if *update {
		if err := os.WriteFile(golden, got, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the page differs from %s (go test -update rewrites it; review the diff)", golden)
	}
	checkPage(t, got, charts)
	// the warnings come before the summary, escaped; the texts after it
	warn := bytes.Index(got, []byte("<li>shard 1/2 &lt;b&gt;: the clock is not synchronized</li>"))
	summary := bytes.Index(got, []byte("<h2>Summary</h2>"))
	server := bytes.Index(got, []byte("<h2>Server metrics</h2>\n<pre class=\"console\">Server metrics http://127.0.0.1:1/metrics (vllm): 4 scrapes\n  requests running  avg 2  max 4</pre>"))
	if warn < 0 || summary < 0 || server < 0 || !(warn < summary && summary < server) {
		t.Errorf("want the warning (at %d) before the summary (at %d) before the server metrics (at %d)", warn, summary, server)
	}
	if !bytes.Contains(got, []byte("<h2>Note</h2>\n<ul class=\"notes\">\n<li>the store the records name (s.aipk) is at other/s.aipk, by its sha256</li>")) {
		t.Error("the page lacks the note")
	}
	if bytes.Contains(got, []byte("<h2>Shards</h2>")) {
		t.Error("an empty text has a heading")
	}
	// the summary table holds the console's numbers
	s, err := metrics.Summarize(metrics.FromRecords(recs), metrics.Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	_, rows := metrics.ConsoleTable(s)
	for _, r := range rows {
		cells := "<tr><th>" + esc(r[0]) + "</th><td>" + strings.Join(r[1:], "</td><td>") + "</td></tr>"
		if !bytes.Contains(got, []byte(cells)) {
			t.Errorf("the summary table lacks the row %q", cells)
		}
	}
	for _, kind := range []string{"HTTPError 500", "TimeoutError"} {
		if !bytes.Contains(got, []byte(`data-name="`+kind+`"`)) {
			t.Errorf("the errors chart has no series %q", kind)
		}
	}
}

// TestEmpty: a page without a request, and one of a single request, are
// whole pages whose charts say so.
func TestEmpty(t *testing.T) {
	got := page(t, nil, metrics.Options{}, Page{})
	checkPage(t, got, charts)
	if n := bytes.Count(got, []byte(`class="empty"`)); n < 7 {
		t.Errorf("%d charts say they are empty, want at least 7", n)
	}
	one := []result.Record{{SentNS: 5e18, IntendedNS: 5e18, EndNS: 5e18 + 3e7, Status: 200, ChunkOffsetsNS: []int64{1e7, 3e7}, OutputTokens: 2, OutputSource: result.SourceUsage}}
	checkPage(t, page(t, one, metrics.Options{Streaming: true}, Page{}), charts)
	// not streamed: TTFT and ITL say why they are empty
	got = page(t, one, metrics.Options{}, Page{})
	checkPage(t, got, charts)
	if n := bytes.Count(got, []byte("need streamed answers")); n != 4 {
		t.Errorf("%d charts say TTFT and ITL need streamed answers, want 4", n)
	}
}

// TestLarge: 5,000 requests with outliers, errors and a stall make a page
// that stays small and well formed (BenchmarkWrite1M: a million).
func TestLarge(t *testing.T) {
	n := 5_000
	got := page(t, synthetic(n), metrics.Options{Streaming: true}, Page{})
	if len(got) > 2_000_000 {
		t.Errorf("%d requests: a page of %d bytes, want at most 2,000,000", n, len(got))
	}
	checkPage(t, got, charts)
	if !bytes.Contains(got, []byte("drawn on its edge")) {
		t.Error("the outliers' cut axis is not explained")
	}
}

// synthetic makes n requests, 1 ms apart: TTFT around 25 ms, a few
// outliers of seconds, a stall in the middle, 1 % failures of two kinds.
func synthetic(n int) []result.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]result.Record, n)
	const ms = int64(1e6)
	for i := range recs {
		t := int64(1.8e18) + int64(i)*ms
		late := rng.Int64N(200_000)
		if i > n/2 && i < n/2+n/50 {
			late += int64(i-n/2) * 10_000
		}
		r := result.Record{IntendedNS: t, SentNS: t + late, Status: 200}
		ttft := 15*ms + rng.Int64N(20*ms)
		if i%1_000 == 7 {
			ttft = 4000 * ms
		}
		chunks := []int64{ttft, ttft + 5*ms + rng.Int64N(5*ms), ttft + 12*ms + rng.Int64N(8*ms)}
		r.ChunkOffsetsNS = chunks
		r.EndNS = r.SentNS + chunks[2]
		r.OutputTokens, r.OutputSource = 16, result.SourceUsage
		switch i % 100 {
		case 3:
			r.ChunkOffsetsNS, r.OutputSource, r.OutputTokens = nil, "", 0
			r.Err = &result.Error{Code: 503, Type: "HTTPError", Message: "busy"}
		case 4:
			if i%300 == 4 {
				r.ChunkOffsetsNS, r.OutputSource, r.OutputTokens = nil, "", 0
				r.Err = &result.Error{Type: "ConnectionError", Message: "reset"}
			}
		}
		recs[i] = r
	}
	return recs
}

// BenchmarkWrite1M collects a million requests and writes their page,
// reporting its size (aiperf-replay report adds the decoding and the
// summary's passes over the records file).
func BenchmarkWrite1M(b *testing.B) {
	recs := synthetic(1_000_000)
	o := metrics.Options{Streaming: true}
	s, err := metrics.Summarize(metrics.FromRecords(recs), o)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		col, _ := NewCollector(o)
		for i := range recs {
			col.Add(&recs[i])
		}
		var w bytes.Buffer
		if err := Write(&w, Page{Summary: s}, col); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(w.Len()), "page-bytes")
	}
}

// node is a parsed XML element.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []node     `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n *node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n *node) walk(f func(*node)) {
	f(n)
	for i := range n.Nodes {
		n.Nodes[i].walk(f)
	}
}

func (n *node) class(c string) []*node {
	var out []*node
	n.walk(func(m *node) {
		if strings.Contains(" "+m.attr("class")+" ", " "+c+" ") {
			out = append(out, m)
		}
	})
	return out
}

var (
	svgRE    = regexp.MustCompile(`(?s)<svg .*?</svg>`)
	numberRE = regexp.MustCompile(`[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?`)
	// anything that would load from elsewhere
	externalRE = regexp.MustCompile(`(?i)<script|<link|<img|<iframe|@import|url\(|\ssrc=|\shref=|https?://`)
)

// checkPage checks a page: self-contained, want charts, each an SVG that
// parses, with tick labels on both axes, at least one series, and only
// finite coordinates within the chart.
func checkPage(t *testing.T, page []byte, want int) {
	t.Helper()
	if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || !bytes.HasSuffix(page, []byte("</html>\n")) {
		t.Error("not a whole HTML page")
	}
	// a URL in the text (the server's) is not a reference; inside a tag
	// (an attribute: src, href, data, a refresh's url) it is
	outside := svgRE.ReplaceAll(page, nil)
	for _, loc := range externalRE.FindAllIndex(outside, -1) {
		m := outside[loc[0]:loc[1]]
		if s := strings.ToLower(string(m)); s == "http://" || s == "https://" {
			if bytes.LastIndexByte(outside[:loc[0]], '<') <= bytes.LastIndexByte(outside[:loc[0]], '>') {
				continue // in text
			}
		}
		t.Errorf("the page refers to something outside it: %q", m)
	}
	svgs := svgRE.FindAll(page, -1)
	if len(svgs) != want {
		t.Fatalf("%d charts, want %d", len(svgs), want)
	}
	for i, svg := range svgs {
		for _, m := range externalRE.FindAll(svg, -1) {
			if string(m) != "http://" { // the SVG namespace
				t.Errorf("chart %d refers to something outside the page: %q", i, m)
			}
		}
		var root node
		if err := xml.Unmarshal(svg, &root); err != nil {
			t.Fatalf("chart %d does not parse: %v", i, err)
		}
		title := root.class("title")[0].Text
		for _, axis := range []string{"x", "y"} {
			ax := root.class(axis)
			if len(ax) != 1 || len(ax[0].class("tick")) < 2 {
				t.Errorf("chart %q: axis %s without tick labels", title, axis)
			}
		}
		if len(root.class("series")) == 0 && len(root.class("empty")) == 0 {
			t.Errorf("chart %q: no series and no note saying it is empty", title)
		}
		w, _ := strconv.ParseFloat(root.attr("width"), 64)
		h, _ := strconv.ParseFloat(root.attr("height"), 64)
		root.walk(func(n *node) {
			for _, a := range n.Attrs {
				switch a.Name.Local {
				case "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "d", "transform":
				default:
					continue
				}
				if v := strings.ToLower(a.Value); strings.Contains(v, "nan") || strings.Contains(v, "inf") {
					t.Errorf("chart %q: %s=%q", title, a.Name.Local, a.Value)
				}
				for _, s := range numberRE.FindAllString(a.Value, -1) {
					if f, err := strconv.ParseFloat(s, 64); err != nil || math.Abs(f) > max(w, h)+1 {
						t.Errorf("chart %q: %s holds %q, outside the chart", title, a.Name.Local, s)
					}
				}
			}
		})
	}
}

// TestPanelsAtTop: the console's boxed warnings (an output-length mismatch,
// tokens arrived together) are at the top of the page, before the summary,
// and not only inside the collapsed console section at its end (fresh-user
// finding: the page hid them).
func TestPanelsAtTop(t *testing.T) {
	recs := readRecords(t, "testdata/tiny.jsonl")
	o := metrics.Options{Streaming: true}
	s, err := metrics.Summarize(metrics.FromRecords(recs), o)
	if err != nil {
		t.Fatal(err)
	}
	s.OSLMismatches, s.ITLNearZero, s.ITLRequests = 1, 2, 4
	var console strings.Builder
	if err := metrics.WriteConsole(&console, s, ""); err != nil {
		t.Fatal(err)
	}
	panels := Panels(console.String())
	if len(panels) != 2 {
		t.Fatalf("Panels found %d panels in the console, want 2:\n%s", len(panels), console.String())
	}
	col, err := NewCollector(o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		col.Add(&recs[i])
	}
	var b bytes.Buffer
	if err := Write(&b, Page{Summary: s, Console: console.String()}, col); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	summary := strings.Index(got, "<h2>Summary</h2>")
	details := strings.Index(got, "<details>")
	for _, p := range panels {
		at := strings.Index(got, "<h2>"+esc(p.Title)+"</h2>")
		if at < 0 || at > summary || at > details {
			t.Errorf("panel %q at %d, want it before the summary (%d) and the console's section (%d)", p.Title, at, summary, details)
		}
		body := strings.Index(got, esc(strings.Join(p.Lines, "\n")))
		if body < 0 || body > summary {
			t.Errorf("panel %q: its lines are not at the top of the page", p.Title)
		}
	}
}
