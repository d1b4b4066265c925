package tokenizekey

import (
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/cmd/stagekey"
	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/tokenizer/identity"
)

// tokenizePart is aiperf-tokenize's end-line settings for s and a shard.
func tokenizePart(t *testing.T, s Tokenize) string {
	t.Helper()
	c, err := s.Check()
	if err != nil {
		t.Fatal(err)
	}
	tok := identity.Builtin()
	text, err := s.Settings(c, "mooncake_trace", &tok)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// TestStoreSettings: the shards of one run give the unsharded store's
// settings; shards of different settings are refused, naming both streams
// and the field; streams without settings leave the tokenize part out.
func TestStoreSettings(t *testing.T) {
	p := &stagekey.Pack{}
	o := request.Options{Model: "m", Endpoint: request.Chat}
	whole, err := p.StoreSettings(o, []stagekey.Records{{Name: "all.jsonl", Settings: tokenizePart(t, Tokenize{Start: -1, End: -1})}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := cachekey.ParseDescription(whole)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := d.Value("pack.model"); v != "m" {
		t.Errorf("pack.model %q", v)
	}
	if v, _ := d.Value("tokenize.shard"); v != "0/1" {
		t.Errorf("tokenize.shard %q", v)
	}
	var shards []stagekey.Records
	for _, sh := range []string{"1/2", "0/2"} {
		shards = append(shards, stagekey.Records{Name: "s" + sh[:1] + ".jsonl", Settings: tokenizePart(t, Tokenize{Start: -1, End: -1, Shard: sh})})
	}
	got, err := p.StoreSettings(o, shards)
	if err != nil || got != whole {
		t.Errorf("both shards: %v\n%s\nwant the whole store's\n%s", err, got, whole)
	}
	shards[1].Settings = tokenizePart(t, Tokenize{Start: -1, End: -1, Shard: "0/2", Seed: 7})
	_, err = p.StoreSettings(o, shards)
	if err == nil || !strings.Contains(err.Error(), `tokenize.seed: "0" in s1.jsonl, "7" in s0.jsonl`) {
		t.Errorf("shards of two seeds: %v", err)
	}
	shards[1].Settings = ""
	got, err = p.StoreSettings(o, shards)
	if err != nil || strings.Contains(got, "tokenize.") || !strings.Contains(got, "pack.model=") {
		t.Errorf("a stream without settings: %v\n%s", err, got)
	}
}
