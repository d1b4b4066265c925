package rundir

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiperf/toolkit/lib/prefix"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
)

// Prefix computes the prefix reuse the store st offers the requests of the
// run recorded in files (prefix.Offered), or nil when the store has no
// hash_ids. capacity > 0 adds the LRU simulation of that many blocks.
// Requests of records the store does not have are left out, and so are
// those the server did not serve (Served): they neither fill a cache nor
// reach the counters the ideal is set beside.
func Prefix(st *store.Reader, files []string, capacity int) (*prefix.Summary, error) {
	if st.BlockSize() == 0 {
		return nil, nil
	}
	var reqs []prefix.Sent
	err := each(files, func(r *result.Record) bool {
		if r.Record >= 0 && r.Record < st.Len() && Served(r) {
			reqs = append(reqs, prefix.Sent{SentNS: r.SentNS, Record: r.Record, Profiling: !r.Warmup()})
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return prefix.Offered(storePrompts{st}, reqs, capacity), nil
}

// Served reports whether the server took the request in: it succeeded, it
// failed after a success status (cut mid-stream, a malformed chunk: the
// prompt was prefilled), or the client gave up waiting once the request
// was written (--timeout, a cancellation: the server had it). An error
// status (a 503 from a router, a 429), a connection that failed, and a
// request cut or cancelled before it was written are not served.
func Served(r *result.Record) bool {
	switch {
	case r.Err == nil || r.Status >= 200 && r.Status <= 299:
		return true
	case r.Cancelled || r.Err.Type == "TimeoutError":
		return r.HTTP != nil && r.HTTP.DataSent > 0
	}
	return false
}

// storePrompts are a store's prompts for prefix.Offered.
type storePrompts struct{ *store.Reader }

func (p storePrompts) PromptTokens(record int) int64 {
	return int64(p.Entry(record).InputTokens)
}

// StorePrefix computes the prefix figures of the requests in files (no
// LRU) against the store their first run info names, when a store with
// its SHA-256 opens at its path, or else (shards run on other machines, a
// folder moved) under its name in the working folder or beside the run
// directories: nil and a note when none does, nil alone when the records
// name none or it has no hash_ids. A store found elsewhere than its path
// is said in the note.
func StorePrefix(files []string, runs []*result.RunInfo) (s *prefix.Summary, note string, err error) {
	var first *result.RunInfo
	for _, r := range runs {
		if r != nil {
			first = r
			break
		}
	}
	if first == nil || first.Store.Path == "" || first.Store.SHA256 == "" {
		return nil, "", nil
	}
	st, at, why := findStore(first.Store.Path, first.Store.SHA256, files)
	if st == nil {
		return nil, why + ": no prefix-cache figures against the trace", nil
	}
	defer st.Close()
	if at != first.Store.Path {
		note = fmt.Sprintf("the store the records name (%s) is at %s, by its sha256", ShowPath(first.Store.Path), at)
	}
	s, err = Prefix(st, files, 0)
	return s, note, err
}

// findStore opens the store of SHA-256 sum: at path, else under path's
// name in the working folder, else beside the run directories of files
// (their parent folders). It returns the store and where, or nil and why.
func findStore(path, sum string, files []string) (*store.Reader, string, string) {
	cands := []string{path, filepath.Base(path)}
	for _, f := range files {
		cands = append(cands, filepath.Join(filepath.Dir(filepath.Dir(f)), filepath.Base(path)))
	}
	why := ""
	seen := map[string]bool{}
	for i, c := range cands {
		if seen[c] {
			continue
		}
		seen[c] = true
		st, err := store.Open(c, store.DefaultOpenOptions())
		if err != nil {
			if i == 0 {
				why = fmt.Sprintf("the store %s the records name does not open here (%v)", ShowPath(path), err)
			}
			continue
		}
		if got := st.Sum(); hex.EncodeToString(got[:]) == sum {
			return st, c, ""
		}
		st.Close()
		if i == 0 {
			why = fmt.Sprintf("%s is not the store the records name (its sha256 differs)", ShowPath(path))
		}
	}
	return nil, "", why
}

// ShowPath is a path the records name (a store's, absolute since
// 2026-12) as a message shows it: relative to the working folder when it
// lies under it, else as it is.
func ShowPath(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return rel
}
