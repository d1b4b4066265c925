// Package cache is a content-addressed cache of packed stores that never
// serves a partial entry: the library behind aiperf-cache.
//
// # Layout
//
// The root (see lib/cachedir) holds
//
//	CACHEDIR.TAG, README   courtesy files (cachedir)
//	version                the layout version, "1\n"; a newer one is refused
//	config                 optional: max-size, max-age (see Config)
//	entries/XX/NAME/       one folder per entry: its files and its manifest
//	locks/XX/NAME          the key's lock file
//	tmp/                   staging folders (p-*) with their locks, and removals (rm-*)
//	quarantine/            entries moved aside by verify --repair
//	memo/                  aiperf-hash's digest memo; never read or touched here
//	keys/XX/HEX            aiperf-hash key's note of a key (lib/cachekey.Note); read by KeyNote
//
// XX is the key's first byte in hex and NAME the key's folder name (see
// Key). An entry folder holds the entry's files, read-only (0444), and a
// manifest (see Manifest) written last. The folder is built in tmp/ and
// appears in entries/ by one rename(2) after its files are synced and its
// manifest written, so a reader, or a process killed at any moment, sees
// either a complete entry or none. Anything in entries/ that does not check
// out (no manifest, an unparseable or newer one, a file missing or of the
// wrong size, a symbolic link anywhere) is a miss, which is also all a power
// loss can make of an entry: the files a manifest vouches for reach the disk
// before the manifest is written, and a manifest or rename that did not is
// a miss. (populate --move, which removes its sources, syncs everything.)
//
// The folder's mtime is the entry's last use: a hit refreshes it at most
// hourly, as Go's build cache does, and Trim removes the least recently
// used entries first.
//
// # Safety
//
// Every name below the root is opened relative to its parent's descriptor
// with O_NOFOLLOW (see dir), so a symbolic link planted inside the root is
// never followed, and a key can only name a folder inside it. Files are
// opened without blocking and refused unless regular, so a named pipe
// planted in the root cannot hang a command. A root or an entry of another
// user is refused unless Options.Shared trusts the root's group (see
// cachedir.CheckOwner). Entries are
// published by rename, never modified; a damaged entry is replaced by the
// next populate, removed by rm or gc, or moved aside by Quarantine.
//
// Hard links make populate and restore O(1) in the size of a store. Writing
// into a linked file in place would change the cached entry as well, which
// is why entry files are read-only; RestoreOptions.Copy and AddOptions.Copy
// give independent copies.
//
// A Cache may be used by any number of processes on any number of hosts
// sharing the root at once. It is not safe for concurrent use by several
// goroutines; open one per goroutine.
package cache
