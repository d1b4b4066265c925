package store

import (
	"path/filepath"
	"testing"
)

// TestSetMeta: an entry set after the records is in the committed store,
// beside the ones given at creation; Settings reads MetaSettings.
func TestSetMeta(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.aipk")
	w, err := Create(path, WriterOptions{Meta: map[string]string{"model": "m"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	w.AddSession("s")
	if err := w.Add(Entry{Session: 0}, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.SetMeta(MetaSettings, "aiperf-cachekey v1\n"); err != nil {
		t.Fatal(err)
	}
	if err := w.SetMeta(MetaSettings, "aiperf-cachekey v1\npack.model=\"m\"\n"); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.SetMeta("x", "y"); err == nil {
		t.Error("SetMeta after Commit: no error")
	}
	r, err := Open(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Settings(); got != "aiperf-cachekey v1\npack.model=\"m\"\n" {
		t.Errorf("Settings %q", got)
	}
	if m := r.Meta(); m["model"] != "m" || len(m) != 2 {
		t.Errorf("Meta %v", m)
	}
}
