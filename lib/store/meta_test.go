package store

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"
)

// TestMetaRoundTrip: the typed metadata reads what pack writes, keeps keys
// it does not know, and writes the same map back.
func TestMetaRoundTrip(t *testing.T) {
	in := map[string]string{MetaEndpoint: "chat", MetaPath: "/v1/chat/completions", MetaModel: "m",
		MetaStreaming: "true", MetaSettings: "pack.model=m", "future": "x"}
	r, _ := openTemp(t, &Spec{Meta: in}, OpenOptions{})
	m := r.Metadata()
	want := Meta{Endpoint: "chat", Path: "/v1/chat/completions", Model: "m", Streaming: true, Settings: "pack.model=m",
		Other: map[string]string{"future": "x"}}
	if m.Endpoint != want.Endpoint || m.Path != want.Path || m.Model != want.Model || m.Streaming != want.Streaming ||
		m.Settings != want.Settings || !maps.Equal(m.Other, want.Other) {
		t.Fatalf("Metadata() = %+v, want %+v", m, want)
	}
	if got := m.Map(); !maps.Equal(got, in) {
		t.Errorf("Map() = %v, want %v", got, in)
	}
	m.Other["future"] = "changed"
	if r.Metadata().Other["future"] != "x" {
		t.Error("changing Metadata().Other changed the reader's")
	}
}

// TestMetaBadStreaming: a streaming value that is neither true nor false
// is refused by the writer, and makes a crafted file fail to open with
// ErrFormat, naming the key.
func TestMetaBadStreaming(t *testing.T) {
	want := `meta streaming is "nope": want true or false`
	err := WriteSpec(t.TempDir()+"/s.aipk", &Spec{Meta: map[string]string{MetaStreaming: "nope"}})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("WriteSpec: got %v, want it to say %q", err, want)
	}
	b := image(t, &Spec{Meta: map[string]string{MetaStreaming: "true"}})
	m := sec(b, secMeta)
	i := bytes.Index(b[m.off:m.end()], []byte("true"))
	if i < 0 {
		t.Fatal("no streaming value in the meta section")
	}
	copy(b[m.off+uint64(i):], "nope")
	reseal(b)
	_, err = OpenBytes(b)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), want) {
		t.Fatalf("OpenBytes: got %v, want ErrFormat saying %q", err, want)
	}
}

// TestSetMeta: metadata set last is what the store holds.
func TestSetMeta(t *testing.T) {
	path := t.TempDir() + "/s.aipk"
	w, err := Create(path, WriterOptions{Meta: map[string]string{MetaModel: "first"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.SetMeta(Meta{Model: "last", Endpoint: "chat"}.Map()); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.SetMeta(nil); err == nil {
		t.Error("SetMeta after Commit: no error")
	}
	r, err := Open(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if m := r.Metadata(); m.Model != "last" || m.Endpoint != "chat" || m.Streaming {
		t.Errorf("Metadata() = %+v, want model last, endpoint chat, not streaming", m)
	}
}
