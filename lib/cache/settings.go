package cache

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/store"
	"golang.org/x/sys/unix"
)

// SettingsError reports a store that records other settings than the key's
// --explain text describes (or none): filed under that key, it would be the
// wrong store for good.
type SettingsError struct {
	File  string
	Key   Key
	Diffs []string // the differing fields (cachekey.DiffSettings); none when Bare
	Bare  bool     // the store records no settings at all
	// From names where the key's description came from, for the message
	// ("" means --explain); Remedy says how to skip the check.
	From, Remedy string
}

func (e *SettingsError) Error() string {
	from, remedy := e.From, e.Remedy
	if from == "" {
		from, remedy = "its --explain", "leave --explain out"
	}
	if e.Bare {
		return fmt.Sprintf("cache: %s does not record the settings it was built with (packed by an older aiperf-pack?), so it cannot be checked against what %s describes (%s): rebuild it, or %s", e.File, e.Key, from, remedy)
	}
	return fmt.Sprintf("cache: %s was built with other settings than %s describes (%s), refusing to cache it under that key: %s", e.File, e.Key, from, strings.Join(e.Diffs, "; "))
}

// explainedSettings returns the settings an --explain text describes, or
// nil when the text is not a key's description (free text, as a named key
// may carry, is not checked). A text that starts like a description must
// be one.
func explainedSettings(explain string) (cachekey.Description, error) {
	if !strings.HasPrefix(explain, cachekey.Domain+"\n") {
		return nil, nil
	}
	d, err := cachekey.ParseDescription(explain)
	if err != nil {
		return nil, fmt.Errorf("--explain: %w", err)
	}
	return d.Settings(), nil
}

// checkSettings compares the settings the store f records with want; a file
// that is not a store is not checked.
func checkSettings(f *os.File, name string, k Key, want cachekey.Description) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var magic [len(store.Magic)]byte
	if n, err := f.ReadAt(magic[:], 0); err != nil && err != io.EOF {
		return err
	} else if n < len(magic) || string(magic[:]) != store.Magic {
		return nil
	}
	var text string
	if err := withStore(f, fi.Size(), false, func(r *store.Reader, _ []byte) error { text = r.Settings(); return nil }); err != nil {
		return fmt.Errorf("%s starts like a store but is not one: %w", name, err)
	}
	if text == "" {
		return &SettingsError{File: name, Key: k, Bare: true}
	}
	got, err := cachekey.ParseDescription(text)
	if err != nil {
		return fmt.Errorf("%s: its recorded settings: %w", name, err)
	}
	if diffs := cachekey.DiffSettings(want, got); len(diffs) > 0 {
		return &SettingsError{File: name, Key: k, Diffs: diffs}
	}
	return nil
}

// checkFiles checks the stores among files (paths) against the settings
// explain describes, before any of them is linked in (a link makes the
// file read-only).
func checkFiles(k Key, files []string, explain string) error {
	want, err := explainedSettings(explain)
	if want == nil || err != nil {
		return err
	}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = checkSettings(f, p, k, want)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// checkStaged checks the staged stores against the settings explain
// describes.
func (s *Staging) checkStaged(k Key, explain string) error {
	want, err := explainedSettings(explain)
	if want == nil || err != nil {
		return err
	}
	for _, file := range s.files {
		if file.DigestKind != DigestAipkTrailer {
			continue
		}
		f, err := s.d.open(file.Name, unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		err = checkSettings(f, file.Name, k, want)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
