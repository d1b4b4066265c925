package hashcmd

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/cmd/packcmd"
	"github.com/aiperf/toolkit/lib/cmd/stagekey"
	"github.com/aiperf/toolkit/lib/cmd/stagekey/tokenizekey"
	"github.com/aiperf/toolkit/lib/cmd/tokenizecmd"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

var update = flag.Bool("update", false, "re-pin the golden pair in testdata/golden (then review the diff)")

// flagTrace is a small Mooncake trace every shaping flag has an effect on:
// three sessions with timestamps 0, 50 and 100 ms, input lengths that a
// block size of 400 also fits, a shared first block, output lengths to cap.
var flagTrace = filepath.Join("testdata", "golden", "mooncake.jsonl")

const gpt2 = "../../tokenizer/testdata/gpt2/tokenizer.json.zst"

// flagCase is a stage flag and a change of its value: run with base, then
// with base and alt.
type flagCase struct {
	stage string
	flag  string
	base  []string
	alt   []string
	input string // the trace, when not flagTrace
}

// shapingCases gives every byte-shaping flag a value that changes the store.
var shapingCases = []flagCase{
	{stagekey.TokenizeStage, "type", nil, []string{"--type", "raw_payload"}, ""},
	{stagekey.TokenizeStage, "tokenizer", nil, []string{"--tokenizer", gpt2}, ""},
	{stagekey.TokenizeStage, "block-size", nil, []string{"--block-size", "400"}, ""},
	{stagekey.TokenizeStage, "seed", nil, []string{"--seed", "7"}, ""},
	{stagekey.TokenizeStage, "start-offset", nil, []string{"--start-offset", "25"}, ""},
	{stagekey.TokenizeStage, "end-offset", nil, []string{"--end-offset", "75"}, ""},
	{stagekey.TokenizeStage, "max-isl", nil, []string{"--max-isl", "650"}, ""},
	{stagekey.TokenizeStage, "max-osl", nil, []string{"--max-osl", "25"}, ""},
	// A single shard packs alone when it holds session 0 only (else pack
	// refuses the gap); it makes a different store, so the shard is keyed.
	{stagekey.TokenizeStage, "shard", nil, []string{"--shard", "0/3"}, ""},
	{stagekey.TokenizeStage, "no-blocks", nil, []string{"--no-blocks"}, filepath.Join("testdata", "weka.json")},
	{stagekey.PackStage, "model", nil, []string{"--model", "m2"}, ""},
	{stagekey.PackStage, "endpoint", nil, []string{"--endpoint", "completions"}, ""},
	{stagekey.PackStage, "streaming", nil, []string{"--streaming"}, ""},
	{stagekey.PackStage, "legacy-max-tokens", nil, []string{"--legacy-max-tokens"}, ""},
	{stagekey.PackStage, "no-include-usage", []string{"--streaming"}, []string{"--no-include-usage"}, ""},
	{stagekey.PackStage, "per-chunk-usage", []string{"--streaming"}, []string{"--per-chunk-usage"}, ""},
	{stagekey.PackStage, "extra", nil, []string{"--extra", "temperature=0.5"}, ""},
	{stagekey.PackStage, "compress", nil, []string{"--compress"}, ""},
	{stagekey.PackStage, "template", []string{"--endpoint", "template", "--template", "testdata/template-a.json"}, []string{"--template", "testdata/template-b.json"}, ""},
}

// contentCase is a shaping flag that names a file: two contents of the
// file, and the flags that go with it.
type contentCase struct {
	stage, flag string
	base        []string
	a, b        string
}

// contentCases gives every shaping flag that takes a file (a cli.PathFlag)
// two contents, so that TestFileFlagsKeyContents checks that the key holds
// the file's bytes, not its name: classify fails on such a flag without
// one.
var contentCases = []contentCase{
	{stagekey.PackStage, "template", []string{"--endpoint", "template"},
		`{"model": {{ model|tojson }}, "prompt": {{ text|tojson }}}`, `{"model": {{ model|tojson }},  "prompt": {{ text|tojson }}}`},
}

// excludedCases gives every excluded flag a value other than its default
// (the outputs go to the test's own directory: see run).
var excludedCases = []flagCase{
	{stagekey.TokenizeStage, "verify", nil, []string{"--verify"}, ""},
	{stagekey.TokenizeStage, "max-line-bytes", nil, []string{"--max-line-bytes", "100000"}, ""},
	{stagekey.TokenizeStage, "v", nil, []string{"-v"}, ""},
	{stagekey.TokenizeStage, "model-map", nil, []string{"--model-map", "a=b"}, ""},
	{stagekey.PackStage, "include-usage", []string{"--streaming"}, []string{"--include-usage"}, ""},
	{stagekey.PackStage, "o", nil, []string{"-o", "{dir}/elsewhere.aipk"}, ""},
	{stagekey.PackStage, "inputs-json", nil, []string{"--inputs-json", "{dir}/inputs.json"}, ""},
	{stagekey.PackStage, "no-end-marker", nil, []string{"--no-end-marker"}, ""},
	{stagekey.PackStage, "max-line", nil, []string{"--max-line", "64KiB"}, ""},
	{stagekey.PackStage, "v", nil, []string{"-v"}, ""},
}

// stageApps are the real stage applications, by name.
func stageApps() map[string]*cli.App {
	return map[string]*cli.App{stagekey.TokenizeStage: tokenizecmd.New(), stagekey.PackStage: packcmd.New()}
}

// shapingFlags returns a stage's shaping flag definitions.
func shapingFlags(stage string) []cli.Flag {
	if stage == stagekey.TokenizeStage {
		return tokenizekey.TokenizeFlags(&tokenizekey.Tokenize{})
	}
	return stagekey.PackFlags(&stagekey.Pack{})
}

// shaping returns the names of a stage's shaping flags.
func shaping(stage string) []string {
	return stagekey.Shaping(stage, shapingFlags(stage))
}

// classify returns what is wrong with the classification of app's flags:
// each must be shaping or excluded (not both), each classified flag must
// exist, and each needs a test case in shapingCases or excludedCases.
func classify(stage string, app *cli.App) []string {
	var bad []string
	shaping := shaping(stage)
	var excluded []string
	for _, e := range stagekey.Excluded {
		if e.Stage == stage {
			excluded = append(excluded, e.Flag)
		}
	}
	var have []string
	for _, f := range app.Flags {
		name := f.Names()[0]
		have = append(have, name)
		s, e := slices.Contains(shaping, name), slices.Contains(excluded, name)
		switch {
		case s && e:
			bad = append(bad, fmt.Sprintf("%s --%s is both shaping and excluded", stage, name))
		case !s && !e:
			bad = append(bad, fmt.Sprintf("%s --%s is not classified: define it in lib/cmd/stagekey, with the shaping flags (and make the key cover it) or the run flags (and add it to stagekey.Excluded with the reason it cannot change a store byte)", stage, name))
		}
	}
	for _, n := range append(slices.Clone(shaping), excluded...) {
		if !slices.Contains(have, n) {
			bad = append(bad, fmt.Sprintf("%s --%s is classified but %s has no such flag", stage, n, stage))
		}
	}
	for _, f := range shapingFlags(stage) {
		n := f.Names()[0]
		if _, ok := f.(*cli.PathFlag); ok && !slices.ContainsFunc(contentCases, func(c contentCase) bool { return c.stage == stage && c.flag == n }) {
			bad = append(bad, fmt.Sprintf("%s --%s names a file and has no contentCases entry (its bytes must be keyed, not its name)", stage, n))
		}
	}
	for _, cs := range []struct {
		names []string
		cases []flagCase
		what  string
	}{{shaping, shapingCases, "shapingCases"}, {excluded, excludedCases, "excludedCases"}} {
		for _, n := range cs.names {
			if !slices.ContainsFunc(cs.cases, func(c flagCase) bool { return c.stage == stage && c.flag == n }) {
				bad = append(bad, fmt.Sprintf("%s --%s has no test value in %s", stage, n, cs.what))
			}
		}
	}
	return bad
}

// TestFlagsClassified: every flag of aiperf-tokenize and aiperf-pack is
// classified, and aiperf-hash key accepts each of them.
func TestFlagsClassified(t *testing.T) {
	var keyNames []string
	for _, f := range keyFlags(&keyOptions{}) {
		keyNames = append(keyNames, f.Names()...)
	}
	for stage, app := range stageApps() {
		for _, msg := range classify(stage, app) {
			t.Error(msg)
		}
		for _, f := range app.Flags {
			for _, n := range f.Names() {
				if !slices.Contains(keyNames, n) {
					t.Errorf("aiperf-hash key does not accept %s --%s", stage, n)
				}
			}
		}
	}
}

// TestClassifyFailsOnNewFlag: the check above can fail: a flag added to a
// stage outside lib/cmd/stagekey is reported, and so is a classified flag a
// stage lost.
func TestClassifyFailsOnNewFlag(t *testing.T) {
	app := packcmd.New()
	app.Flags = append(app.Flags, &cli.BoolFlag{Name: "prompt-list"})
	got := classify(stagekey.PackStage, app)
	if len(got) != 1 || !strings.Contains(got[0], "--prompt-list is not classified") {
		t.Errorf("a new flag: %q", got)
	}
	saved := contentCases
	contentCases = nil
	got = classify(stagekey.PackStage, packcmd.New())
	contentCases = saved
	if len(got) != 1 || !strings.Contains(got[0], "--template names a file and has no contentCases entry") {
		t.Errorf("a file flag without a content case: %q", got)
	}
	app = tokenizecmd.New()
	app.Flags = slices.DeleteFunc(app.Flags, func(f cli.Flag) bool { return f.Names()[0] == "seed" })
	got = classify(stagekey.TokenizeStage, app)
	if len(got) != 1 || !strings.Contains(got[0], "--seed is classified but") {
		t.Errorf("a lost flag: %q", got)
	}
}

// pipeline runs aiperf-tokenize and aiperf-pack in-process, as the shell
// would: tokenize tokArgs TRACE > records; pack packArgs records. The store
// is written to dir/store.aipk unless packArgs name another -o. It returns
// the records and the store bytes.
func pipeline(t *testing.T, dir, trace string, tokArgs, packArgs []string) (records, storeBytes []byte) {
	t.Helper()
	recs := filepath.Join(dir, "records.jsonl")
	var out, errb bytes.Buffer
	app := tokenizecmd.New()
	app.Writer, app.ErrWriter = &out, &errb
	if code := base.Main(app, slices.Concat([]string{"aiperf-tokenize"}, tokArgs, []string{trace})); code != 0 {
		t.Fatalf("aiperf-tokenize %q: exit %d: %s", tokArgs, code, errb.String())
	}
	records = bytes.Clone(out.Bytes())
	if err := os.WriteFile(recs, records, 0o644); err != nil {
		t.Fatal(err)
	}
	storePath := filepath.Join(dir, "store.aipk")
	args := slices.Concat([]string{"aiperf-pack", "-o", storePath}, packArgs, []string{recs})
	for i, a := range args {
		if a == "-o" {
			storePath = args[i+1]
		}
	}
	app = packcmd.New()
	out.Reset()
	errb.Reset()
	app.Writer, app.ErrWriter = &out, &errb
	if code := base.Main(app, args); code != 0 {
		t.Fatalf("aiperf-pack %q: exit %d: %s", packArgs, code, errb.String())
	}
	b, err := os.ReadFile(storePath)
	if err != nil {
		t.Fatal(err)
	}
	return records, b
}

// keyOf runs aiperf-hash key in-process and returns its output line and the
// --explain text.
func keyOf(t *testing.T, memoDir, trace string, args []string) (key, explain string) {
	t.Helper()
	for _, extra := range [][]string{nil, {"--explain"}} {
		var out, errb bytes.Buffer
		app := New()
		app.Writer, app.ErrWriter = &out, &errb
		argv := slices.Concat([]string{"aiperf-hash", "key", "--dir", memoDir}, extra, args, []string{trace})
		if code := base.Main(app, argv); code != 0 {
			t.Fatalf("%q: exit %d: %s", argv, code, errb.String())
		}
		if extra == nil {
			key = strings.TrimSuffix(out.String(), "\n")
		} else {
			explain = out.String()
		}
	}
	return key, explain
}

func expand(args []string, dir string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "{dir}", dir)
	}
	return out
}

// args returns the tokenize and pack arguments of a case.
func (c flagCase) args(dir string, withAlt bool) (tok, pk []string) {
	a := expand(c.base, dir)
	if withAlt {
		a = append(a, expand(c.alt, dir)...)
	}
	if c.stage == stagekey.TokenizeStage {
		return a, nil
	}
	return nil, a
}

// TestFlagsChangeStoreAndKey is the test that makes the Python aiperf's
// cache bug (a key that missed settings which change the bytes) impossible
// here: every shaping flag changes both the store bytes and the key, every
// excluded flag changes neither.
func TestFlagsChangeStoreAndKey(t *testing.T) {
	memo := t.TempDir()
	packBase := []string{"--model", "m"}
	for _, tc := range [][]flagCase{shapingCases, excludedCases} {
		for _, c := range tc {
			shaping := slices.Contains(shaping(c.stage), c.flag)
			t.Run(c.stage+"/"+c.flag, func(t *testing.T) {
				dir := t.TempDir()
				tok0, pk0 := c.args(dir, false)
				tok1, pk1 := c.args(dir, true)
				pk0, pk1 = append(slices.Clone(packBase), pk0...), append(slices.Clone(packBase), pk1...)
				in := cmp.Or(c.input, flagTrace)
				_, s0 := pipeline(t, dir, in, tok0, pk0)
				_, s1 := pipeline(t, dir, in, tok1, pk1)
				k0, e0 := keyOf(t, memo, in, slices.Concat(tok0, pk0))
				k1, e1 := keyOf(t, memo, in, slices.Concat(tok1, pk1))
				sameStore, sameKey := bytes.Equal(s0, s1), k0 == k1
				if shaping && (sameStore || sameKey) {
					t.Errorf("shaping flag %q: store changed %v, key changed %v (both must)\nexplain without:\n%s\nwith:\n%s", c.alt, !sameStore, !sameKey, e0, e1)
				}
				if !shaping && (!sameStore || !sameKey) {
					t.Errorf("excluded flag %q: store changed %v, key changed %v (neither may)", c.alt, !sameStore, !sameKey)
				}
				if k1 != sum([]byte(e1)) {
					t.Errorf("key %q is not the SHA-256 of its --explain text", k1)
				}
			})
		}
	}
}

// TestFileFlagsKeyContents: a shaping flag that names a file keys the
// file's bytes: other bytes at the same path change the store and the key,
// the same bytes at another path change neither.
func TestFileFlagsKeyContents(t *testing.T) {
	memo := t.TempDir()
	for _, c := range contentCases {
		t.Run(c.stage+"/"+c.flag, func(t *testing.T) {
			dir := t.TempDir()
			run := func(name, content string) (storeBytes []byte, key string) {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				args := slices.Concat([]string{"--model", "m"}, c.base, []string{"--" + c.flag, p})
				tok, pk := args, []string(nil)
				if c.stage == stagekey.PackStage {
					tok, pk = nil, args
				}
				_, s := pipeline(t, t.TempDir(), flagTrace, tok, pk)
				k, _ := keyOf(t, memo, flagTrace, slices.Concat(tok, pk))
				return s, k
			}
			sa, ka := run("f", c.a)
			sb, kb := run("f", c.b)
			sa2, ka2 := run("g", c.a)
			if bytes.Equal(sa, sb) || ka == kb {
				t.Errorf("other bytes at one path: store changed %v, key changed %v (both must)", !bytes.Equal(sa, sb), ka != kb)
			}
			if !bytes.Equal(sa, sa2) || ka != ka2 {
				t.Errorf("one content at another path: store changed %v, key changed %v (neither may)", !bytes.Equal(sa, sa2), ka != ka2)
			}
		})
	}
}

// TestDefaultValuesKeyAsAbsent: a flag given its default value makes the
// store of its absence, so it gets that key too (--type mooncake_trace on
// a Mooncake trace and --block-size 512 gave other keys for one store).
func TestDefaultValuesKeyAsAbsent(t *testing.T) {
	memo := t.TempDir()
	packBase := []string{"--model", "m"}
	dir := t.TempDir()
	_, s0 := pipeline(t, dir, flagTrace, nil, packBase)
	k0, e0 := keyOf(t, memo, flagTrace, packBase)
	for _, c := range []flagCase{
		{stagekey.TokenizeStage, "type", nil, []string{"--type", "mooncake_trace"}, ""},
		{stagekey.TokenizeStage, "block-size", nil, []string{"--block-size", "512"}, ""},
		{stagekey.TokenizeStage, "type and block-size", nil, []string{"--block-size", "512", "--type", "mooncake_trace"}, ""},
		{stagekey.TokenizeStage, "seed", nil, []string{"--seed", "0"}, ""},
		{stagekey.TokenizeStage, "tokenizer", nil, []string{"--tokenizer", "builtin"}, ""},
		{stagekey.TokenizeStage, "shard", nil, []string{"--shard", "0/1"}, ""},
		{stagekey.TokenizeStage, "max-isl", nil, []string{"--max-isl", "0"}, ""},
		{stagekey.PackStage, "endpoint", nil, []string{"--endpoint", "chat"}, ""},
	} {
		t.Run(c.flag, func(t *testing.T) {
			tok, pk := c.args(dir, true)
			pk = append(slices.Clone(packBase), pk...)
			_, s1 := pipeline(t, t.TempDir(), flagTrace, tok, pk)
			k1, e1 := keyOf(t, memo, flagTrace, slices.Concat(tok, pk))
			if !bytes.Equal(s0, s1) {
				t.Fatalf("%q: the store changed: not a default value", c.alt)
			}
			if k1 != k0 {
				t.Errorf("%q: key %s, without it %s\nexplain without:\n%s\nwith:\n%s", c.alt, k1, k0, e0, e1)
			}
		})
	}
}

// TestStoreRecordsKeySettings: the store of every shaping flag's run
// records, as its settings, exactly the key's description without the input
// (what aiperf-cache compares with a key's --explain).
func TestStoreRecordsKeySettings(t *testing.T) {
	memo := t.TempDir()
	packBase := []string{"--model", "m"}
	for _, c := range shapingCases {
		if c.flag == "compress" {
			continue // a zstd stream of a store, not a store
		}
		t.Run(c.stage+"/"+c.flag, func(t *testing.T) {
			dir := t.TempDir()
			tok, pk := c.args(dir, true)
			pk = append(slices.Clone(packBase), pk...)
			pipeline(t, dir, flagTrace, tok, pk)
			_, explain := keyOf(t, memo, flagTrace, slices.Concat(tok, pk))
			want, err := cachekey.ParseDescription(explain)
			if err != nil {
				t.Fatal(err)
			}
			r, err := store.Open(filepath.Join(dir, "store.aipk"), store.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.Settings(); got != want.Settings().String() {
				t.Errorf("%q: the store records\n%s\nthe key describes\n%s", c.alt, got, want.Settings())
			}
		})
	}
}

// TestMaxRecordBytes: the largest --max-line aiperf-pack (and aiperf-hash
// key) accept is the largest record a store holds.
func TestMaxRecordBytes(t *testing.T) {
	if stagekey.MaxRecordBytes != store.MaxPayload {
		t.Errorf("stagekey.MaxRecordBytes %d, store.MaxPayload %d", uint64(stagekey.MaxRecordBytes), uint64(store.MaxPayload))
	}
}

// TestStoreVersion: cachekey.StoreVersion (the key's salt) is the version the
// store writer writes; cachekey may not link lib/store to read it.
func TestStoreVersion(t *testing.T) {
	if cachekey.StoreVersion != store.FormatVersion {
		t.Errorf("cachekey.StoreVersion %d, store.FormatVersion %d: set cachekey.StoreVersion", cachekey.StoreVersion, store.FormatVersion)
	}
	if s := cachekey.CurrentSalt(); s.Records != record.Version {
		t.Errorf("salt records version %d, record.Version %d", s.Records, record.Version)
	}
}

// goldenCases are the runs the golden pair pins: a synthesized trace, the
// same with a compressed store, and verbatim payloads (trace reading and
// body formatting without synthesis).
var goldenCases = []struct {
	name      string
	trace     string // flagTrace when ""
	tok, pack []string
	bump      string // the version to bump when the records change
}{
	{"synthesized", "", nil, []string{"--model", "golden-model", "--streaming", "--per-chunk-usage", "--extra", "temperature=0.5", "--extra", `stream_options={"keep":true}`}, "synthversion.Synthesis (or traceversion.Version if the trace reader changed)"},
	{"legacy", "", []string{"--max-osl", "25", "--seed", "3"}, []string{"--model", "golden-model", "--legacy-max-tokens"}, "synthversion.Synthesis (or traceversion.Version if the trace reader changed)"},
	{"compressed", "", nil, []string{"--model", "golden-model", "--compress"}, "synthversion.Synthesis (or traceversion.Version if the trace reader changed)"},
	{"verbatim", "", []string{"--type", "raw_payload"}, []string{"--endpoint", "completions"}, "traceversion.Version"},
	// Mooncake messages, payloads and text rows with their context modes.
	{"contexts", filepath.Join("testdata", "golden", "contexts.jsonl"), nil, []string{"--model", "golden-model"}, "traceversion.Version (or synthversion.Synthesis if a synthesized prompt changed)"},
}

const goldenFile = "testdata/golden/pair.txt"

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// versionsLine is the salt as one line.
func versionsLine() string {
	s := cachekey.CurrentSalt()
	names := make([]string, 0, len(s.Algorithms))
	for n := range s.Algorithms {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "records=%d store=%d", s.Records, s.Store)
	for _, n := range names {
		fmt.Fprintf(&b, " %s=%d", n, s.Algorithms[n])
	}
	return b.String()
}

// corpusSum is the digest of the synthesis corpus files, as shipped.
func corpusSum(t *testing.T) string {
	files, err := filepath.Glob("../../synth/corpus/*.txt.zst")
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus files: %v %v", files, err)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s\x00", filepath.Base(f))
		h.Write(b)
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// TestGoldenPair pins, for a fixed small trace, the key and the SHA-256 of
// the records and of the store together. A change to trace reading,
// synthesis, the corpus, body formatting or compression that changes bytes
// must bump its version in lib/cmd/stagekey (and so every key); this test
// says which, and `go test -run TestGoldenPair -update` re-pins after the
// bump.
func TestGoldenPair(t *testing.T) {
	memo := t.TempDir()
	var got strings.Builder
	fmt.Fprintf(&got, "# The golden pair (lib/cmd/hashcmd TestGoldenPair): keys and store digests pinned together.\n")
	fmt.Fprintf(&got, "# Re-pin with: go test ./lib/cmd/hashcmd -run TestGoldenPair -update (after bumping a version).\n")
	fmt.Fprintf(&got, "versions %s\n", versionsLine())
	fmt.Fprintf(&got, "corpus %s\n", corpusSum(t))
	for _, c := range goldenCases {
		dir, trace := t.TempDir(), c.trace
		if trace == "" {
			trace = flagTrace
		}
		recs, st := pipeline(t, dir, trace, c.tok, c.pack)
		key, _ := keyOf(t, memo, trace, slices.Concat(c.tok, c.pack))
		fmt.Fprintf(&got, "case %s: aiperf-tokenize %s | aiperf-pack %s\n", c.name, strings.Join(append(slices.Clone(c.tok), filepath.Base(trace)), " "), strings.Join(c.pack, " "))
		fmt.Fprintf(&got, "  key %s\n", key)
		fmt.Fprintf(&got, "  records %s\n", sum(recs))
		fmt.Fprintf(&got, "  store %s\n", sum(st))
	}
	if *update {
		if err := os.WriteFile(goldenFile, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if string(want) == got.String() {
		return
	}
	for _, msg := range goldenDiff(string(want), got.String()) {
		t.Error(msg)
	}
}

// goldenDiff explains the difference of two golden texts: which version to
// bump, or that the versions moved and the pair needs re-pinning.
func goldenDiff(want, got string) []string {
	field := func(text string) map[string]string {
		m := map[string]string{}
		cur := ""
		for _, l := range strings.Split(text, "\n") {
			switch {
			case strings.HasPrefix(l, "case "):
				cur, _, _ = strings.Cut(strings.TrimPrefix(l, "case "), ":")
				m[cur+" flags"] = l
			case strings.HasPrefix(l, "  "):
				k, v, _ := strings.Cut(strings.TrimSpace(l), " ")
				m[cur+" "+k] = v
			case l != "" && !strings.HasPrefix(l, "#"):
				k, v, _ := strings.Cut(l, " ")
				m[k] = v
			}
		}
		return m
	}
	w, g := field(want), field(got)
	if w["versions"] != g["versions"] {
		return []string{fmt.Sprintf("versions are %s, the golden pair was pinned under %s: re-pin it with -update", g["versions"], w["versions"])}
	}
	var bad []string
	if w["corpus"] != g["corpus"] {
		bad = append(bad, "the synthesis corpus changed: bump synthversion.Corpus, then re-pin with -update")
	}
	for _, c := range goldenCases {
		n := c.name
		switch {
		case w[n+" flags"] != g[n+" flags"] || w[n+" key"] == "":
			bad = append(bad, fmt.Sprintf("case %s is not the pinned one: re-pin with -update", n))
		case w[n+" records"] != g[n+" records"]:
			bad = append(bad, fmt.Sprintf("case %s: the records changed (%s, pinned %s) under the same versions: bump %s", n, g[n+" records"], w[n+" records"], c.bump))
		case w[n+" store"] != g[n+" store"] && slices.Contains(c.pack, "--compress"):
			bad = append(bad, fmt.Sprintf("case %s: the compressed store changed (%s, pinned %s) from the same records: bump compressversion.Version", n, g[n+" store"], w[n+" store"]))
		case w[n+" store"] != g[n+" store"]:
			bad = append(bad, fmt.Sprintf("case %s: the store changed (%s, pinned %s) from the same records: bump bodyversion.Version (or, for a new store format, store.FormatVersion and cachekey.StoreVersion)", n, g[n+" store"], w[n+" store"]))
		case w[n+" key"] != g[n+" key"]:
			bad = append(bad, fmt.Sprintf("case %s: the key changed (%s, pinned %s) and the bytes did not: a change of what the key describes; re-pin with -update if meant", n, g[n+" key"], w[n+" key"]))
		}
	}
	if len(bad) == 0 {
		bad = append(bad, "the golden file differs in its comments: re-pin with -update")
	}
	return bad
}

// TestDetectTypeStdinHead: the format of a trace on stdin is detected from
// the head key keeps while it digests the stream; a first record past that
// head asks for --type instead of a guess.
func TestDetectTypeStdinHead(t *testing.T) {
	small := `{"timestamp": 0, "input_length": 10, "hash_ids": [0]}` + "\n"
	big := `{"text_input": "` + strings.Repeat("x", headMax) + `"}` + "\n"
	for _, c := range []struct {
		in, typ, err string
	}{
		{small, "mooncake_trace", ""},
		{big, "", "give --type"},
	} {
		h := &headReader{r: strings.NewReader(c.in)}
		if _, err := io.Copy(io.Discard, h); err != nil {
			t.Fatal(err)
		}
		typ, err := detectType("-", h, 1<<30)
		if typ != c.typ || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%d bytes: got %q, %v; want %q, %q", len(c.in), typ, err, c.typ, c.err)
		}
	}
}
