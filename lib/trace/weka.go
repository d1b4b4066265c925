package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// TypeWeka is the Weka kv-cache-tester agentic trace (the Python aiperf's
// weka_trace): one JSON object a file, a file or a directory of *.json.
const TypeWeka = "weka_trace"

// Agentic session-tree fields of a Row (weka_trace only).
type Agentic struct {
	// Model is the model the trace recorded for the request.
	Model string
	// Parent is the session this one was spawned by ("" for a root).
	Parent string
	// SpawnTurn is the parent's turn after which this session starts
	// (-1: with the parent's start). JoinTurn is the parent's turn that
	// waits for this session to end; -1: the parent never waits (a
	// background child: async_launched, or no parent turn follows).
	SpawnTurn, JoinTurn int
	// Agent is the subagent_type of a subagent, "chain" for a parallel
	// chain detected in a flat request list; "" for a root.
	Agent string
	// Stream reports a recorded type "s" request (it is sent like an "n").
	Stream bool
	// BlockSize is the trace's tokens per hash_id block.
	BlockSize int

	HasAPITime   bool
	APITimeNS    int64 // recorded server time of the request
	HasThinkTime bool
	ThinkTimeNS  int64 // recorded client delay before the request

	// Segments lay the prompt out as messages: each takes the next Blocks
	// of Row.HashIDs, in order, and covers them all.
	Segments []Segment
}

// Segment is one message of an agentic prompt: a role and the number of
// consecutive prompt blocks (Row.HashIDs) its content is made of.
type Segment struct {
	Role   string // system, user or assistant
	Blocks int
}

// wekaReq is one n/s request as read, with its place in the file.
type wekaReq struct {
	path       string // JSON path, e.g. requests[3].requests[2]
	outer      int    // index in the outer list (the subagent's for inner ones)
	t, end     int64  // start in root-trace ns, and start + api_time
	model      string
	in, out    int
	ids        []uint64 // the trace's own hash ids (full blocks)
	stream     bool
	api, thk   int64
	hasA, hasT bool
}

type wekaSub struct {
	path                 string
	outer                int
	t                    int64
	agentID, typ, status string
	tool, system         int
	reqs                 []*wekaReq
}

type wekaTrace struct {
	file         string
	id           string
	bs           int
	tool, system int
	reqs         []*wekaReq // outer n/s requests in list order
	subs         []*wekaSub
}

// wekaDecoder reads the files of a weka_trace input one at a time.
type wekaDecoder struct {
	files   []string
	data    [][]byte // for a stream: the one document, with files[0] its name
	maxLine int
	read    *int64
	filt    *filter
	seq     int64
	rows    []*Row
	ids     map[string]string // trace id -> file, to refuse duplicates

	// Files are read and parsed one ahead, in a goroutine (parsing is
	// most of the reader's time; the rows are built in order here).
	pre  chan wekaParsed
	stop chan struct{}
}

// wekaParsed is one file read and parsed ahead.
type wekaParsed struct {
	tr  *wekaTrace
	n   int64
	err error
}

// prefetch starts reading and parsing d.files in order, one ahead.
func (d *wekaDecoder) prefetch() {
	files, max := d.files, d.maxLine
	pre, stop := make(chan wekaParsed, 1), make(chan struct{})
	d.pre, d.stop = pre, stop
	go func() {
		defer close(pre)
		for _, name := range files {
			var p wekaParsed
			b, err := readLimited(name, max)
			if err == nil {
				p.n = int64(len(b))
				p.tr, err = parseWeka(name, b)
			}
			p.err = err
			select {
			case pre <- p:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
}

// Close stops the reading ahead.
func (d *wekaDecoder) Close() error {
	if d.stop != nil {
		close(d.stop)
		d.stop = nil
	}
	return nil
}

// nextTrace is the next file's trace, parsed.
func (d *wekaDecoder) nextTrace(name string) (*wekaTrace, error) {
	if len(d.data) == 0 {
		if d.pre == nil {
			d.prefetch()
		}
		p := <-d.pre
		if d.read != nil {
			*d.read += p.n
		}
		return p.tr, p.err
	}
	doc := d.data[0]
	d.data = d.data[1:]
	if d.read != nil {
		*d.read += int64(len(doc))
	}
	return parseWeka(name, doc)
}

func (d *wekaDecoder) next() (*Row, error) {
	for len(d.rows) == 0 {
		if len(d.files) == 0 {
			return nil, io.EOF
		}
		name := d.files[0]
		tr, err := d.nextTrace(name)
		d.files = d.files[1:]
		if err != nil {
			return nil, err
		}
		if d.ids == nil {
			d.ids = map[string]string{}
		}
		if prev, dup := d.ids[tr.id]; dup {
			return nil, &Error{File: name, Field: "id", Err: fmt.Errorf("trace id %q is also the id of %s", tr.id, prev)}
		}
		d.ids[tr.id] = name
		rows, err := tr.rows(&d.seq, d.filt)
		if err != nil {
			return nil, err
		}
		d.rows = rows
	}
	row := d.rows[0]
	d.rows[0] = nil
	d.rows = d.rows[1:]
	return row, nil
}

func readLimited(name string, max int) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, &Error{File: name, Err: err}
	}
	if len(b) > max {
		return nil, &Error{File: name, Err: fmt.Errorf("longer than %d bytes (--max-line-bytes raises the limit)", max)}
	}
	return b, nil
}

// wekaFiles lists the *.json regular files of dir (not recursive), sorted.
func wekaFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue
		}
		if !fi.Mode().IsRegular() {
			return nil, &Error{File: p, Err: errors.New("not a regular file: a directory input reads regular files only")}
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// WekaFiles lists the files a weka_trace directory is read from (what cache
// keys digest for it).
func WekaFiles(dir string) ([]string, error) { return wekaFiles(dir) }

// isWeka reports whether a JSON document looks like a Weka trace: an object
// with requests, block_size and hash_id_scope.
func isWeka(doc []byte) bool {
	if len(doc) == 0 || doc[0] != '{' || !validJSON(doc) {
		return false
	}
	return hasMember(doc, "requests") && hasMember(doc, "block_size") && hasMember(doc, "hash_id_scope")
}

func parseWeka(name string, doc []byte) (*wekaTrace, error) {
	doc = trimSpaceBOM(doc)
	if len(doc) == 0 {
		return nil, &Error{File: name, Err: errors.New("empty file: want one JSON object")}
	}
	// One strict pass (checkText) validates the syntax too; the lax
	// validation runs only to word a syntax error.
	if fe, _ := checkText(doc); fe != nil {
		if !validJSON(doc) {
			msg, _ := syntaxError(doc)
			return nil, &Error{File: name, Err: fmt.Errorf("not valid JSON: %s", msg)}
		}
		return nil, &Error{File: name, Field: fe.field, Err: errors.New(fe.msg)}
	}
	tr := &wekaTrace{file: name}
	if fe := tr.parse(doc); fe != nil {
		return nil, &Error{File: name, Field: fe.field, Err: errors.New(fe.msg)}
	}
	return tr, nil
}

func trimSpaceBOM(b []byte) []byte {
	s := strings.TrimPrefix(string(b), "\xEF\xBB\xBF")
	b = b[len(b)-len(s):]
	i, j := 0, len(b)
	for i < j && isWS(b[i]) {
		i++
	}
	for j > i && isWS(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// fields reads the members of an object into a map (the last one wins),
// refusing keys not in allowed (pydantic's extra="forbid").
func objectFields(path string, v []byte, allowed ...string) (map[string][]byte, *fieldError) {
	if kind(v) != kindObject {
		return nil, wrongKind(path, "an object", v)
	}
	m := map[string][]byte{}
	var fe *fieldError
	_ = members(v, func(k string, val []byte, _ int) error {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			fe = ferr(joinField(path, k), "unknown field (want %s)", strings.Join(allowed, ", "))
			return fe
		}
		m[k] = val
		return nil
	})
	return m, fe
}

func (tr *wekaTrace) parse(doc []byte) *fieldError {
	m, fe := objectFields("", doc, "id", "models", "block_size", "hash_id_scope", "tool_tokens", "system_tokens", "requests", "totals")
	if fe != nil {
		return fe
	}
	for _, k := range []string{"id", "models", "block_size", "hash_id_scope", "requests"} {
		if isNull(m[k]) {
			return ferr(k, "missing")
		}
	}
	if tr.id, fe = stringValue("id", m["id"]); fe != nil {
		return fe
	}
	if tr.id == "" {
		return ferr("id", "must not be empty")
	}
	if _, fe = stringList("models", m["models"]); fe != nil {
		return fe
	}
	if tr.bs, fe = count("block_size", m["block_size"]); fe != nil {
		return fe
	}
	if tr.bs < 1 || tr.bs > 1<<20 {
		return ferr("block_size", "must be 1..%d, got %d", 1<<20, tr.bs)
	}
	scope, fe := stringValue("hash_id_scope", m["hash_id_scope"])
	if fe != nil {
		return fe
	}
	if scope != "local" {
		return ferr("hash_id_scope", "%q is not supported: only \"local\" (hash ids scoped to their trace), as the Python aiperf", scope)
	}
	if tr.tool, tr.system, fe = prefixTokens("", m); fe != nil {
		return fe
	}
	if k := kind(m["totals"]); m["totals"] != nil && !isNull(m["totals"]) && k != kindObject {
		return wrongKind("totals", "an object", m["totals"])
	}
	return tr.parseRequests(m["requests"])
}

func prefixTokens(path string, m map[string][]byte) (tool, system int, fe *fieldError) {
	if v := m["tool_tokens"]; !isNull(v) {
		if tool, fe = tokens(joinField(path, "tool_tokens"), v); fe != nil {
			return
		}
	}
	if v := m["system_tokens"]; !isNull(v) {
		if system, fe = tokens(joinField(path, "system_tokens"), v); fe != nil {
			return
		}
	}
	return
}

func (tr *wekaTrace) parseRequests(v []byte) *fieldError {
	if kind(v) != kindArray {
		return wrongKind("requests", "an array", v)
	}
	var fe *fieldError
	_ = elements(v, func(i int, e []byte, _ int) error {
		path := fmt.Sprintf("requests[%d]", i)
		typ, f := requestType(path, e)
		if f != nil {
			fe = f
			return f
		}
		if typ == "subagent" {
			s, f := tr.parseSub(path, i, e)
			if f != nil {
				fe = f
				return f
			}
			tr.subs = append(tr.subs, s)
			return nil
		}
		r, f := tr.parseReq(path, i, e, nil)
		if f != nil {
			fe = f
			return f
		}
		tr.reqs = append(tr.reqs, r)
		return nil
	})
	return fe
}

func requestType(path string, e []byte) (string, *fieldError) {
	if kind(e) != kindObject {
		return "", wrongKind(path, "an object", e)
	}
	t := member(e, "type")
	if isNull(t) {
		return "", ferr(path+".type", "missing (want n, s or subagent)")
	}
	s, fe := stringValue(path+".type", t)
	if fe != nil {
		return "", fe
	}
	switch s {
	case "n", "s", "subagent":
		return s, nil
	}
	return "", ferr(path+".type", "must be n, s or subagent, got %q", s)
}

var wekaReqFields = []string{"t", "type", "model", "in", "out", "hash_ids", "input_types", "output_types", "stop", "api_time", "think_time", "ttft"}

// parseReq reads one n/s request; sub is the subagent it belongs to (nil
// for an outer one), whose spawn time decides how its t is read.
func (tr *wekaTrace) parseReq(path string, outer int, e []byte, sub *wekaSub) (*wekaReq, *fieldError) {
	m, fe := objectFields(path, e, wekaReqFields...)
	if fe != nil {
		return nil, fe
	}
	for _, k := range []string{"t", "model", "in", "out"} {
		if isNull(m[k]) {
			return nil, ferr(path+"."+k, "missing")
		}
	}
	r := &wekaReq{path: path, outer: outer}
	typ, _ := stringValue(path+".type", m["type"])
	r.stream = typ == "s"
	if typ == "n" && !isNull(m["ttft"]) {
		return nil, ferr(path+".ttft", "only a streaming (type s) request has a ttft")
	}
	if r.t, fe = durationNS(path+".t", m["t"], scaleS); fe != nil {
		return nil, fe
	}
	if r.model, fe = stringValue(path+".model", m["model"]); fe != nil {
		return nil, fe
	}
	if r.in, fe = tokens(path+".in", m["in"]); fe != nil {
		return nil, fe
	}
	if r.in == 0 {
		return nil, ferr(path+".in", "must be positive (a prompt of 0 tokens)")
	}
	if r.out, fe = tokens(path+".out", m["out"]); fe != nil {
		return nil, fe
	}
	if v := m["hash_ids"]; !isNull(v) {
		if r.ids, fe = hashIDs(path+".hash_ids", v); fe != nil {
			return nil, fe
		}
	}
	if full := r.in / tr.bs; len(r.ids) != full {
		return nil, ferr(path+".hash_ids", "%d hash_ids of %d-token blocks cannot make in=%d: want %d (one per full block; the last %d tokens are the request's own)",
			len(r.ids), tr.bs, r.in, full, r.in%tr.bs)
	}
	for _, k := range []string{"input_types", "output_types"} {
		if v := m[k]; !isNull(v) {
			if _, fe = stringList(path+"."+k, v); fe != nil {
				return nil, fe
			}
		}
	}
	if v := m["stop"]; !isNull(v) {
		if _, fe = stringValue(path+".stop", v); fe != nil {
			return nil, fe
		}
	}
	for _, f := range []struct {
		k   string
		dst *int64
		has *bool
	}{{"api_time", &r.api, &r.hasA}, {"think_time", &r.thk, &r.hasT}, {"ttft", new(int64), new(bool)}} {
		if v := m[f.k]; !isNull(v) {
			if *f.dst, fe = durationNS(path+"."+f.k, v, scaleS); fe != nil {
				return nil, fe
			}
			*f.has = true
		}
	}
	if sub != nil && r.t+wekaEpsilonNS < sub.t {
		// An inner t before the spawn is relative to it (older captures),
		// else absolute, as the Python aiperf reads it.
		r.t += sub.t
	}
	r.end = r.t + r.api
	return r, nil
}

// wekaEpsilonNS is the Python aiperf's join epsilon (1 µs).
const wekaEpsilonNS = 1000

func (tr *wekaTrace) parseSub(path string, outer int, e []byte) (*wekaSub, *fieldError) {
	m, fe := objectFields(path, e, "t", "type", "agent_id", "subagent_type", "duration_ms", "total_tokens", "tool_use_count", "status", "requests", "models", "tool_tokens", "system_tokens")
	if fe != nil {
		return nil, fe
	}
	for _, k := range []string{"t", "agent_id", "subagent_type", "status", "requests", "models"} {
		if isNull(m[k]) {
			return nil, ferr(path+"."+k, "missing")
		}
	}
	s := &wekaSub{path: path, outer: outer}
	if s.t, fe = durationNS(path+".t", m["t"], scaleS); fe != nil {
		return nil, fe
	}
	for _, f := range []struct {
		k   string
		dst *string
	}{{"agent_id", &s.agentID}, {"subagent_type", &s.typ}, {"status", &s.status}} {
		if *f.dst, fe = stringValue(path+"."+f.k, m[f.k]); fe != nil {
			return nil, fe
		}
	}
	if s.agentID == "" || strings.ContainsRune(s.agentID, '/') {
		return nil, ferr(path+".agent_id", "must be a non-empty name without '/', got %q", s.agentID)
	}
	for _, k := range []string{"duration_ms", "total_tokens", "tool_use_count"} {
		if v := m[k]; !isNull(v) {
			if _, fe = integer(path+"."+k, v); fe != nil {
				return nil, fe
			}
		}
	}
	if _, fe = stringList(path+".models", m["models"]); fe != nil {
		return nil, fe
	}
	if s.tool, s.system, fe = prefixTokens(path, m); fe != nil {
		return nil, fe
	}
	rv := m["requests"]
	if kind(rv) != kindArray {
		return nil, wrongKind(path+".requests", "an array", rv)
	}
	_ = elements(rv, func(i int, ie []byte, _ int) error {
		ip := fmt.Sprintf("%s.requests[%d]", path, i)
		typ, f := requestType(ip, ie)
		if f == nil && typ == "subagent" {
			f = ferr(ip+".type", "a subagent's requests are n or s requests, not another subagent")
		}
		if f != nil {
			fe = f
			return f
		}
		r, f := tr.parseReq(ip, outer, ie, s)
		if f != nil {
			fe = f
			return f
		}
		s.reqs = append(s.reqs, r)
		return nil
	})
	if fe != nil {
		return nil, fe
	}
	if len(s.reqs) == 0 {
		return nil, ferr(path+".requests", "a subagent without requests (nothing to replay for agent %q)", s.agentID)
	}
	return s, nil
}

// probeWeka reports whether the file at path is a Weka trace: a JSON object
// with requests, block_size and hash_id_scope (one probe, as aiperf's).
func probeWeka(path string, max int) bool {
	b, err := readLimited(path, max)
	return err == nil && isWeka(trimSpaceBOM(b))
}
