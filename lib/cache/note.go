package cache

import (
	"encoding/hex"
	"errors"
	"io/fs"

	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/cachekey"
)

// KeyNote returns the note aiperf-hash key left in the root for k
// (lib/cachekey.Note, at cachedir.NoteName): what k describes and the
// names of its inputs. It returns nil and no error when k is a named key
// or there is no note; a note that does not check out (not k's, or a
// description that does not hash to k) is an error, and no note. The note
// is opened as every file below the root is (no link followed, no pipe
// waited on).
func (c *Cache) KeyNote(k Key) (*cachekey.Note, error) {
	d, ok := k.Digest()
	if !ok {
		return nil, nil
	}
	h := hex.EncodeToString(d[:])
	keys, err := c.dir.sub(cachedir.Keys)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer keys.close()
	shard, err := keys.sub(h[:2])
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer shard.close()
	b, err := readSmall(shard, h, cachekey.MaxNoteSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	n, err := cachekey.ParseNote(b, d)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: shard.join(h), Err: err}
	}
	return n, nil
}
