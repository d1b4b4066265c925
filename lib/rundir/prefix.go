package rundir

import (
	"github.com/aiperf/toolkit/lib/prefix"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
)

// Prefix computes the prefix reuse the store st offers the requests of the
// run recorded in files (prefix.Offered), or nil when the store has no
// hash_ids. capacity > 0 adds the LRU simulation of that many blocks.
// Requests of records the store does not have are left out.
func Prefix(st *store.Reader, files []string, capacity int) (*prefix.Summary, error) {
	if st.BlockSize() == 0 {
		return nil, nil
	}
	var reqs []prefix.Sent
	err := each(files, func(r *result.Record) bool {
		if r.Record >= 0 && r.Record < st.Len() {
			reqs = append(reqs, prefix.Sent{SentNS: r.SentNS, Record: r.Record, Profiling: !r.Warmup()})
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return prefix.Offered(storePrompts{st}, reqs, capacity), nil
}

// storePrompts are a store's prompts for prefix.Offered.
type storePrompts struct{ *store.Reader }

func (p storePrompts) PromptTokens(record int) int64 {
	return int64(p.Entry(record).InputTokens)
}
