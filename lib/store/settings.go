package store

import "errors"

// MetaSettings is the metadata key of the settings a store was built with:
// the description of its cache key without the input digest, in the words
// of `aiperf-hash key --explain` (lib/cachekey), which aiperf-pack writes
// so that a cache can refuse to file the store under a key that describes
// other settings. Absent from stores of older packs.
const MetaSettings = "settings"

// Settings returns the store's MetaSettings ("" when it has none).
func (r *Reader) Settings() string { return r.meta[MetaSettings] }

// SetMeta sets one metadata entry, for a value known only after the records
// (aiperf-pack learns the records' settings from their end line). It may be
// called until Commit.
func (w *Writer) SetMeta(key, value string) error {
	if w.done {
		return errors.New("store: SetMeta after commit or abort")
	}
	m, err := parseMeta(w.meta, 0)
	if err != nil {
		return err
	}
	m[key] = value
	b, err := encodeMeta(m)
	if err != nil {
		return err
	}
	w.meta = b
	return nil
}
