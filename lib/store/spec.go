package store

import (
	"bytes"
	"maps"
)

// Spec describes a whole store in memory, for fixtures, tests and small tools
// (the shape of ltx's FileSpec). WriteSpec writes one; ReadSpec reads one
// back.
type Spec struct {
	Meta     map[string]string
	Sessions []string // session ids; session i has id Sessions[i]
	Records  []Record // in the order they are added
	// BlockSize is the tokens per hash_id block of the records' HashIDs:
	// set exactly when some record has hash ids.
	BlockSize uint32
}

// Record is one record of a Spec.
type Record struct {
	Entry
	Payload []byte
	HashIDs []uint64 // the trace's KV block ids of the prompt; nil when none
}

// WriteSpec writes spec to path as a store file.
func WriteSpec(path string, spec *Spec) error {
	w, err := Create(path, WriterOptions{Meta: spec.Meta})
	if err != nil {
		return err
	}
	defer w.Abort()
	for _, id := range spec.Sessions {
		w.AddSession(id)
	}
	if spec.BlockSize != 0 {
		if err := w.SetBlockSize(spec.BlockSize); err != nil {
			return err
		}
	}
	for _, rec := range spec.Records {
		if err := w.AddHashed(rec.Entry, rec.HashIDs, rec.Payload); err != nil {
			return err
		}
	}
	return w.Commit()
}

// ReadSpec copies the whole store into a Spec. Empty collections are nil;
// payloads are copies (never nil), valid after r is closed.
func ReadSpec(r *Reader) *Spec {
	s := &Spec{}
	if len(r.meta) > 0 {
		s.Meta = maps.Clone(r.meta)
	}
	for i := range r.NumSessions() {
		s.Sessions = append(s.Sessions, r.SessionID(uint32(i)))
	}
	s.BlockSize = r.hashes.blockSize
	for i := range r.Len() {
		rec := Record{Entry: r.Entry(i), Payload: bytes.Clone(r.Payload(i))}
		if r.NumHashIDs(i) > 0 {
			rec.HashIDs = r.AppendHashIDs(nil, i)
		}
		s.Records = append(s.Records, rec)
	}
	return s
}
