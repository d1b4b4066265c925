package stagekey

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/internal/shard"
	"github.com/aiperf/toolkit/lib/request"
)

// A store records the settings it was built with: the description of its
// cache key without the input digest (cachekey.Description.Settings), in
// the same words as `aiperf-hash key --explain`. aiperf-tokenize writes its
// part (the salt, the tokenize.* fields, the tokenizer's identity) on the
// records' end line, aiperf-pack adds its own (pack.*, and the salt of
// the versions it owns) and writes the whole into the store, and
// aiperf-cache populate and ensure compare it with the key's --explain
// text: a store built with other flags than its key describes is refused
// instead of cached under that key for good.

// tokenizeSalt names the salt fields that aiperf-tokenize's build decides
// (the records it writes); aiperf-pack's build decides the others.
var tokenizeSalt = []string{"salt.records", "salt.algorithm.trace", "salt.algorithm.synthesis", "salt.algorithm.corpus"}

// tokenizeSide reports whether a description field is aiperf-tokenize's.
func tokenizeSide(name string) bool {
	return strings.HasPrefix(name, "tokenize.") || strings.HasPrefix(name, "tokenizer.") || slices.Contains(tokenizeSalt, name)
}

// Records is the settings part a records stream carried on its end line
// ("" when it had none: hand-made records, an older aiperf-tokenize, a
// stream packed with --no-end-marker).
type Records struct {
	Name     string
	Settings string
}

// StoreSettings returns the settings description aiperf-pack writes into a
// store packed from records with the request options o: its own fields
// (pack.compress "false": compression wraps the finished store) and salt, and aiperf-tokenize's part from the records. The shards of one
// run agree on every field but tokenize.shard; all N shards of N are the
// unsharded store (tokenize.shard "0/1"), a part of them says which. When
// a stream carried no settings, the store says nothing about how its
// records were made (and a cache check will say so). Shards made with
// different settings are an error: no key describes their store.
func (p *Pack) StoreSettings(o request.Options, records []Records) (string, error) {
	// A --compress store is the zstd stream of a plain store, and that
	// store (what unpack restores) was shaped without compression.
	plain := *p
	plain.Compress = false
	b := cachekey.New(cachekey.CurrentSalt())
	for _, f := range plain.Fields(o) {
		if f.IsList {
			b.List(f.Name, f.List)
		} else {
			b.Field(f.Name, f.Value)
		}
	}
	text, err := b.Explain()
	if err != nil {
		return "", err
	}
	d, err := cachekey.ParseDescription(text)
	if err != nil {
		return "", err
	}
	tok, err := mergeShards(records)
	if err != nil || tok == nil {
		// The salt of this build stands for the records' too: without
		// their tokenize.* fields such a store fits no key anyway.
		return d.String(), err
	}
	for n := range d {
		if tokenizeSide(n) {
			delete(d, n)
		}
	}
	for n, v := range tok {
		if tokenizeSide(n) {
			d[n] = v
		}
	}
	return d.String(), nil
}

// mergeShards returns the tokenize part common to the streams (nil when one
// of them has none), with their shards combined.
func mergeShards(records []Records) (cachekey.Description, error) {
	var (
		merged cachekey.Description
		from   string
		shards []string
	)
	for _, r := range records {
		if r.Settings == "" {
			return nil, nil
		}
		d, err := cachekey.ParseDescription(r.Settings)
		if err != nil {
			return nil, fmt.Errorf("%s: the end line's settings: %w", r.Name, err)
		}
		shard, _ := d.Value("tokenize.shard")
		shards = append(shards, shard)
		delete(d, "tokenize.shard")
		if merged == nil {
			merged, from = d, r.Name
			continue
		}
		if diff := cachekey.DiffSettings(merged, d); len(diff) > 0 {
			for i, l := range diff { // the words of DiffSettings are a key's and a store's
				l = strings.ReplaceAll(l, " in the key", " in "+from)
				diff[i] = strings.ReplaceAll(l, " in the store", " in "+r.Name)
			}
			return nil, fmt.Errorf("the record streams were made with different aiperf-tokenize settings (no cache key describes their store): %s", strings.Join(diff, "; "))
		}
	}
	if merged != nil {
		if err := completeShards(records, shards); err != nil {
			return nil, err
		}
		merged["tokenize.shard"] = strconv.Quote(combineShards(shards))
	}
	return merged, nil
}

// completeShards refuses streams that are several of a trace's shards but
// not all (aiperf-tokenize --shard i/N): their store would lack the missing
// shards' sessions without a word, and no key names it. One shard alone
// packs into a store of its own, which its key names.
func completeShards(records []Records, shards []string) error {
	if len(shards) < 2 {
		return nil
	}
	count := 0
	seen := map[int]bool{}
	for k, s := range shards {
		i, n, err := shard.Parse(s)
		if err != nil || n <= 1 {
			continue
		}
		if count != 0 && n != count {
			return fmt.Errorf("%s holds shard %s, %s another shard count (%d): they are not the shards of one trace", records[k].Name, s, records[0].Name, count)
		}
		count, seen[i] = n, true
	}
	var missing []string
	for i := range count {
		if !seen[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("the records are shards of a trace, and shard %s is missing: the store would lack its sessions (pack every shard's records)", missing[0])
	}
	return fmt.Errorf("the records are shards of a trace, and shards %s are missing: the store would lack their sessions (pack every shard's records)", strings.Join(missing, ", "))
}

// combineShards names the shards a store holds: "0/1" for a whole trace
// (one unsharded stream, or every shard i/N of N), else the shards joined
// by "+" in order ("0/3+2/3"), which no key names.
func combineShards(shards []string) string {
	if len(shards) == 1 {
		return shards[0]
	}
	seen := map[int]bool{}
	count := -1
	for _, s := range shards {
		i, n, err := shard.Parse(s)
		if err != nil || (count != -1 && n != count) || seen[i] {
			count = -2
			break
		}
		count, seen[i] = n, true
	}
	if count == len(shards) {
		return "0/1"
	}
	sorted := slices.Clone(shards)
	sort.Strings(sorted)
	return strings.Join(slices.Compact(sorted), "+")
}
