package result

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// RunInfo describes the run a records file comes from: its identity, the
// store it replayed and its settings, so that `report`, `compare` and a
// merge of shards read them instead of guessing.
//
// The first record a run writes carries it as the "run" member, right after
// "v" (a field, not a line of its own, so that every line stays one request
// and older readers, which ignore unknown fields, read new files):
//
//	{"v":1,"run":{"id":"9f…","tool":"aiperf-replay v1","start_unix_ns":…,
//	  "store":{"path":"s.aipk","sha256":"…","records":12,"sessions":4},
//	  "url":"http://127.0.0.1:8000","path":"/v1/chat/completions","endpoint":"chat",
//	  "model":"m","streaming":true,"schedule":"concurrency","config":{…}},"record":0,…}
//
// A sharded run's shards carry "shard" and "shards" (shard i of N,
// 0-based; absent when the run is not sharded). Files written before the
// member existed have no run info and read as they always did.
type RunInfo struct {
	ID      string // "id": the run's id, the prefix of its X-Request-IDs (aiperf's benchmark_id)
	Tool    string // "tool": the program and version that wrote the records
	StartNS int64  // "start_unix_ns": when the schedule started
	// Shard and Shards: this is shard Shard of Shards ("shard", "shards");
	// Shards 0 means the run is not sharded.
	Shard, Shards int
	// Host is the machine the run ran on ("host", its hostname; "" when
	// unknown): shards on several machines read their schedules off clocks
	// that may disagree. BootID is its kernel's boot id ("boot_id",
	// /proc/sys/kernel/random/boot_id; "" when unknown), which tells
	// machines apart where hostnames do not: containers on one kernel
	// share it (and its clock) under different hostnames, and cloned
	// machines differ in it under one.
	Host, BootID string
	// Clock is what the kernel said of the machine's clock when the run
	// started ("clock"; nil when unknown).
	Clock    *ClockInfo
	Store    StoreInfo // "store"
	URL      string    // "url": the server's base URL, without user information
	Path     string    // "path": the request path
	Endpoint string    // "endpoint": chat, completions, or "" when unknown
	Model    string    // "model": the model the store's bodies name ("" for none or several)
	// Streaming reports that the store's bodies ask for streamed answers
	// ("streaming"). Whether each answer was streamed is the record's own
	// Streamed.
	Streaming bool
	Schedule  string // "schedule": the schedule that ran (fixed, concurrency or rate)
	// Offered says what a shard offered of the whole replay's rate,
	// concurrency and counts ("offered", e.g. "rate 2.5 of 10 sessions/s";
	// "" when unsharded).
	Offered string
	// Config is a JSON object of every setting of the run as the user gave
	// it (aiperf's input_config); nil when absent ("config").
	Config []byte
}

// ClockInfo is the state of a machine's clock as adjtimex(2) reports it:
// whether a time daemon told the kernel the clock is synchronized, and
// the kernel's bound on its error. A merge of shards from several machines
// warns when a clock was not called synchronized: a disagreement between
// clocks does not show in the spread of the shards' starts, which each
// shard read off its own clock.
type ClockInfo struct {
	Synced bool // "synced": the kernel calls the clock synchronized (STA_UNSYNC clear)
	// MaxErrorUS is the kernel's maximum error, µs ("max_error_us"; 16 s
	// when unsynchronized). It is a worst case that grows by 500 µs a
	// second between the daemon's updates, not an offset: a record of the
	// state, judged by nothing.
	MaxErrorUS int64
}

// StoreInfo identifies a replayed store.
type StoreInfo struct {
	Path string // "path": as named on the command line
	// SHA256 is the store's own checksum (its trailer, the SHA-256 of the
	// bytes before it), lowercase hex ("sha256"): two runs replayed the same
	// store when their SHA256 agree, wherever the file was.
	SHA256   string
	Records  int64 // "records"
	Sessions int64 // "sessions"
}

// appendRun appends the "run" member (without a leading comma).
func appendRun(dst []byte, ri *RunInfo) []byte {
	dst = append(dst, `"run":{"id":`...)
	dst = jsonx.AppendString(dst, ri.ID)
	dst = appendStr(dst, "tool", ri.Tool)
	dst = appendInt(dst, "start_unix_ns", ri.StartNS, false)
	if ri.Shards > 0 {
		dst = appendInt(dst, "shard", int64(ri.Shard), true)
		dst = appendInt(dst, "shards", int64(ri.Shards), true)
	}
	if ri.Host != "" {
		dst = appendStr(dst, "host", ri.Host)
	}
	if ri.BootID != "" {
		dst = appendStr(dst, "boot_id", ri.BootID)
	}
	if c := ri.Clock; c != nil {
		dst = append(dst, `,"clock":{"synced":`...)
		dst = strconv.AppendBool(dst, c.Synced)
		dst = appendInt(dst, "max_error_us", max(c.MaxErrorUS, 0), true)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"store":{"path":`...)
	dst = jsonx.AppendString(dst, ri.Store.Path)
	dst = appendStr(dst, "sha256", ri.Store.SHA256)
	dst = appendInt(dst, "records", ri.Store.Records, true)
	dst = appendInt(dst, "sessions", ri.Store.Sessions, true)
	dst = append(dst, '}')
	dst = appendStr(dst, "url", ri.URL)
	dst = appendStr(dst, "path", ri.Path)
	dst = appendStr(dst, "endpoint", ri.Endpoint)
	dst = appendStr(dst, "model", ri.Model)
	dst = append(dst, `,"streaming":`...)
	dst = strconv.AppendBool(dst, ri.Streaming)
	dst = appendStr(dst, "schedule", ri.Schedule)
	dst = appendStr(dst, "offered", ri.Offered)
	if len(ri.Config) > 0 {
		dst = append(dst, `,"config":`...)
		dst = append(dst, ri.Config...)
	}
	return append(dst, '}')
}

// parseRun decodes the value of a "run" member.
func parseRun(v []byte) (*RunInfo, error) {
	if v[0] != '{' {
		return nil, fieldErr("run", "not an object")
	}
	ri := &RunInfo{}
	str := func(field string, dst *string) func([]byte) error {
		return func(v []byte) error {
			s, err := parseString(field, v)
			*dst = s
			return err
		}
	}
	_, err := jsonx.Fields(v, 0, func(key, v []byte, _ int) error {
		k := string(key[1 : len(key)-1])
		f := "run." + k
		switch k {
		case "id":
			return str(f, &ri.ID)(v)
		case "tool":
			return str(f, &ri.Tool)(v)
		case "url":
			return str(f, &ri.URL)(v)
		case "path":
			return str(f, &ri.Path)(v)
		case "endpoint":
			return str(f, &ri.Endpoint)(v)
		case "model":
			return str(f, &ri.Model)(v)
		case "schedule":
			return str(f, &ri.Schedule)(v)
		case "host":
			return str(f, &ri.Host)(v)
		case "boot_id":
			return str(f, &ri.BootID)(v)
		case "clock":
			c, err := parseClock(v)
			ri.Clock = c
			return err
		case "offered":
			return str(f, &ri.Offered)(v)
		case "start_unix_ns":
			x, err := parseInt(f, v, 0, math.MaxInt64)
			ri.StartNS = x
			return err
		case "shard", "shards":
			x, err := parseInt(f, v, 0, math.MaxInt32)
			if k == "shard" {
				ri.Shard = int(x)
			} else {
				ri.Shards = int(x)
			}
			return err
		case "streaming":
			switch string(v) {
			case "true":
				ri.Streaming = true
			case "false":
			default:
				return fieldErr(f, "not a boolean: %s", clip(v))
			}
		case "config":
			if v[0] != '{' {
				return fieldErr(f, "not an object")
			}
			ri.Config = bytes.Clone(v)
		case "store":
			if v[0] != '{' {
				return fieldErr(f, "not an object")
			}
			_, err := jsonx.Fields(v, 0, func(key, v []byte, _ int) error {
				k := string(key[1 : len(key)-1])
				f := "run.store." + k
				switch k {
				case "path":
					return str(f, &ri.Store.Path)(v)
				case "sha256":
					return str(f, &ri.Store.SHA256)(v)
				case "records", "sessions":
					x, err := parseInt(f, v, 0, math.MaxInt64)
					if k == "records" {
						ri.Store.Records = x
					} else {
						ri.Store.Sessions = x
					}
					return err
				}
				return nil
			})
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ri.Shard > 0 && ri.Shard >= ri.Shards { // Shards 0: "shard" without "shards"
		return nil, fieldErr("run.shard", "%d is not below shards %d", ri.Shard, ri.Shards)
	}
	return ri, nil
}

// parseClock decodes the value of a "run.clock" member.
func parseClock(v []byte) (*ClockInfo, error) {
	if v[0] != '{' {
		return nil, fieldErr("run.clock", "not an object")
	}
	c := &ClockInfo{}
	_, err := jsonx.Fields(v, 0, func(key, v []byte, _ int) error {
		switch k := string(key[1 : len(key)-1]); k {
		case "synced":
			switch string(v) {
			case "true":
				c.Synced = true
			case "false":
			default:
				return fieldErr("run.clock.synced", "not a boolean: %s", clip(v))
			}
		case "max_error_us":
			x, err := parseInt("run.clock.max_error_us", v, 0, math.MaxInt64)
			c.MaxErrorUS = x
			return err
		}
		return nil
	})
	return c, err
}

// Diff lists the settings in which two runs differ, one "name: a, b" line
// each: the typed settings (url, path, endpoint, model, streaming,
// schedule) and every member of Config but those named in ignore and
// those named like the typed settings (a config's are as given). The
// run's identity (id, tool, start, shard) and the store (see SameStore)
// are not settings.
func (r *RunInfo) Diff(o *RunInfo, ignore ...string) []string {
	var out []string
	add := func(name, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s: %s, %s", name, a, b))
		}
	}
	q := strconv.Quote
	add("url", q(r.URL), q(o.URL))
	add("path", q(r.Path), q(o.Path))
	add("endpoint", q(r.Endpoint), q(o.Endpoint))
	add("model", q(r.Model), q(o.Model))
	add("streaming", strconv.FormatBool(r.Streaming), strconv.FormatBool(o.Streaming))
	add("schedule", q(r.Schedule), q(o.Schedule))
	a, b := configMembers(r.Config), configMembers(o.Config)
	skip := func(k string) bool {
		switch k {
		case "url", "path", "endpoint", "model", "streaming", "schedule": // compared above, resolved
			return true
		}
		for _, i := range ignore {
			if i == k {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	for _, m := range append(a, b...) {
		if seen[m.key] || skip(m.key) {
			continue
		}
		seen[m.key] = true
		va, vb := lookup(a, m.key), lookup(b, m.key)
		if !bytes.Equal(va, vb) {
			out = append(out, fmt.Sprintf("%s: %s, %s", m.key, shown(va), shown(vb)))
		}
	}
	return out
}

// SameStore reports whether two runs replayed the same store (by its
// checksum; unknown when either lacks one).
func (r *RunInfo) SameStore(o *RunInfo) (same, known bool) {
	if r.Store.SHA256 == "" || o.Store.SHA256 == "" {
		return false, false
	}
	return r.Store.SHA256 == o.Store.SHA256, true
}

type member struct {
	key string
	raw []byte
}

// configMembers lists the members of a config object (in order).
func configMembers(cfg []byte) []member {
	var out []member
	if len(cfg) == 0 {
		return nil
	}
	jsonx.Fields(cfg, jsonx.SkipSpace(cfg, 0), func(k, v []byte, _ int) error {
		key, err := jsonx.Unquote(k)
		if err != nil {
			return err
		}
		out = append(out, member{key, v})
		return nil
	})
	return out
}

func lookup(ms []member, key string) []byte {
	for _, m := range ms {
		if m.key == key {
			return m.raw
		}
	}
	return nil
}

func shown(v []byte) string {
	if v == nil {
		return "(absent)"
	}
	return clip(v)
}
