package cache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/store"
)

// TestPopulateChecksSettings: with a key's description as --explain, a
// store recording other settings (or none) is refused before it is linked
// in, naming the fields; the same settings, a free-text explain or a file
// that is no store pass.
func TestPopulateChecksSettings(t *testing.T) {
	c, _ := testCache(t)
	dir := t.TempDir()
	explain := cachekey.Domain + "\ninput=[\"file:sha256:00\"]\npack.model=\"m\"\nsalt.store=1\n"
	k := digestKey(explain)
	mk := func(name, settings string) string {
		p := filepath.Join(dir, name)
		spec := &store.Spec{Meta: map[string]string{}, Sessions: []string{"s"}, Records: []store.Record{{Payload: []byte(`{}`)}}}
		if settings != "" {
			spec.Meta[store.MetaSettings] = settings
		}
		if err := store.WriteSpec(p, spec); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wrong := mk("wrong.aipk", cachekey.Domain+"\npack.model=\"WRONG\"\nsalt.store=1\n")
	_, _, err := c.Populate(k, []string{wrong}, PopulateOptions{Explain: explain})
	var se *SettingsError
	if !errors.As(err, &se) || se.Bare || !strings.Contains(err.Error(), `pack.model: "m" in the key, "WRONG" in the store`) {
		t.Errorf("other settings: %v", err)
	}
	if fi, err := os.Stat(wrong); err != nil || fi.Mode().Perm()&0o200 == 0 {
		t.Errorf("the refused store was made read-only (or is gone): %v %v", fi.Mode(), err)
	}
	if _, err := c.Lookup(k); !errors.Is(err, ErrMiss) {
		t.Errorf("lookup after a refusal: %v", err)
	}
	bare := mk("bare.aipk", "")
	if _, _, err := c.Populate(k, []string{bare}, PopulateOptions{Explain: explain}); !errors.As(err, &se) || !se.Bare {
		t.Errorf("no settings: %v", err)
	}
	if _, _, err := c.Populate(MustParseKey("named"), []string{bare}, PopulateOptions{Explain: "by hand"}); err != nil {
		t.Errorf("free text: %v", err)
	}
	if _, _, err := c.Populate(k, []string{bare}, PopulateOptions{Explain: cachekey.Domain + "\nbad line\n"}); err == nil || !strings.Contains(err.Error(), "--explain") {
		t.Errorf("a broken description: %v", err)
	}
	right := mk("right.aipk", cachekey.Domain+"\npack.model=\"m\"\nsalt.store=1\n")
	notes := filepath.Join(dir, "notes.txt")
	writeFile(t, notes, "hello")
	if _, _, err := c.Populate(k, []string{right, notes}, PopulateOptions{Explain: explain}); err != nil {
		t.Errorf("the same settings: %v", err)
	}
}
