package store

// Settings returns the store's MetaSettings: the description of the
// settings it was built with, in the words of `aiperf-hash key --explain`
// without the input digest (lib/cachekey), which aiperf-pack writes so that
// a cache can refuse to file the store under a key that describes other
// settings ("" for stores of older packs).
func (r *Reader) Settings() string { return r.info.Settings }
