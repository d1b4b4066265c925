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
}

// Record is one record of a Spec.
type Record struct {
	Entry
	Payload []byte
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
	for _, rec := range spec.Records {
		if err := w.Add(rec.Entry, rec.Payload); err != nil {
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
	for i := range r.Len() {
		s.Records = append(s.Records, Record{Entry: r.Entry(i), Payload: bytes.Clone(r.Payload(i))})
	}
	return s
}
