package store

import (
	"path/filepath"
	"testing"
)

// TestSettingsMeta: an entry set after the records is in the committed store,
// beside the ones given at creation; Settings reads MetaSettings.
func TestSettingsMeta(t *testing.T) {
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
	if err := w.SetMeta(Meta{Model: "m", Settings: "aiperf-cachekey v1\n"}.Map()); err != nil {
		t.Fatal(err)
	}
	if err := w.SetMeta(Meta{Model: "m", Settings: "aiperf-cachekey v1\npack.model=\"m\"\n"}.Map()); err != nil {
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
	if got := r.Settings(); got != "aiperf-cachekey v1\npack.model=\"m\"\n" {
		t.Errorf("Settings %q", got)
	}
	if m := r.Meta(); m["model"] != "m" || m[MetaSettings] == "" {
		t.Errorf("Meta %v", m)
	}
}
