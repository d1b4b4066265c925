package digest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	sha256 "github.com/minio/sha256-simd"
)

// The memo file, MemoFile in the memo directory, is text:
//
//	aiperf-hash digest memo v1
//	f DEV INO SIZE MTIME CTIME SHA256 WRITTEN USED CRC
//	d FINGERPRINT SHA256 WRITTEN USED CRC
//
// An f line is a file's digest keyed by its stat identity: device, inode,
// size, and mtime and ctime in ns since the epoch. A d line is a directory
// digest keyed by the fingerprint of its walk (see fingerprint). WRITTEN is
// the time, in ns, just before the stat whose identity the line records;
// USED the last time the entry was found (refreshed at most every
// memoRefresh, for the size cap). Numbers are plain decimal with no sign or
// leading zero (except 0 itself), hashes lowercase hex, and CRC the first 8
// hex digits of the SHA-256 of the line up to the space before it (SHA-256
// rather than a CRC because it needs no table built at start-up, which a
// warm run would pay for). A reader skips any
// line that does not decode exactly so, and ignores the whole file when its
// first line is not the header above or when it is larger than memoMaxBytes.
//
// A line is trusted only when the file was last changed more than the file
// system's timestamp granularity before WRITTEN: a change within the same
// tick as the stat could leave the identity as it was (git's "racy clean"
// problem). See granularity for how the granularity is determined.
//
// Writers merge: under an exclusive flock on MemoFile+".lock" they read the
// current file, add their entries, keep the memoMaxEntries most recently
// used, and replace the file by a rename. Readers take no lock (a rename is
// atomic). There is no fsync: a memo lost in a crash costs one re-read, and
// a torn one fails its checksums.
const (
	MemoFile       = "sha256.v1"
	memoHeader     = "aiperf-hash digest memo v1\n"
	memoMaxEntries = 4096
	memoMaxBytes   = memoMaxEntries * 256
	memoRefresh    = time.Hour
	memoLockWait   = time.Second
)

// fileID is the stat identity of a file.
type fileID struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

// changed returns the later of the file's mtime and ctime.
func (id fileID) changed() int64 { return max(id.mtime, id.ctime) }

type memoEntry struct {
	key           string // "f DEV INO SIZE MTIME CTIME" or "d FINGERPRINT"
	sum           Sum
	written, used int64
}

// Memo remembers digests between runs in a directory (normally
// "<cache root>/memo"). Lookups read the memo file once; Flush saves what was
// learned. A Memo is safe for concurrent use, and any number of processes
// may share one directory.
type Memo struct {
	// Perm is the permission of the memo file and its lock (0 means 0644):
	// a shared cache root gives 0664, so the whole group can update it.
	Perm fs.FileMode

	dir   string
	now   func() time.Time
	mu    sync.Mutex
	read  bool
	data  []byte               // the memo file as read (header checked), for lookups
	index map[string]memoEntry // data decoded, once lookups are many
	finds int
	adds  map[string]memoEntry // learned or refreshed since the last Flush
}

// memoScanFinds is how many lookups scan the memo's bytes before it is
// decoded whole: one scan of a full memo costs about a tenth of decoding it.
const memoScanFinds = 8

// OpenMemo returns the memo kept in dir. Nothing is read or created until it
// is used.
func OpenMemo(dir string) *Memo { return &Memo{dir: dir, now: time.Now} }

// Dir returns the memo's directory.
func (m *Memo) Dir() string { return m.dir }

func fileKey(id fileID) string {
	b := make([]byte, 0, 100)
	b = append(b, 'f', ' ')
	b = strconv.AppendUint(b, id.dev, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, id.ino, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, id.size, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, id.mtime, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, id.ctime, 10)
	return string(b)
}

func dirKey(fp Sum) string { return "d " + fp.String() }

// allIDs reports whether every member has a stat identity (the memo needs
// them all to fingerprint a tree).
func allIDs(members []source) bool {
	for _, m := range members {
		if !m.idOK {
			return false
		}
	}
	return true
}

// fingerprint pins a walk: for every member in order, its relative path, a
// NUL and its stat identity. Equal fingerprints mean the same names with the
// same identities, so the same bytes (under the racy rule).
func fingerprint(members []source) Sum {
	h := sha256.New()
	var b [40]byte
	for _, m := range members {
		io.WriteString(h, m.name)
		h.Write(nul)
		binary.LittleEndian.PutUint64(b[0:], m.id.dev)
		binary.LittleEndian.PutUint64(b[8:], m.id.ino)
		binary.LittleEndian.PutUint64(b[16:], uint64(m.id.size))
		binary.LittleEndian.PutUint64(b[24:], uint64(m.id.mtime))
		binary.LittleEndian.PutUint64(b[32:], uint64(m.id.ctime))
		h.Write(b[:])
	}
	var s Sum
	h.Sum(s[:0])
	return s
}

// trusted reports whether an entry written at written (ns) can be trusted
// for a file whose identity is id, at path: the file's last change must be
// more than the granularity older than the stat the entry was made from.
func trusted(written int64, path string, id fileID) bool {
	return written-id.changed() > int64(granularity(path, id))
}

func (m *Memo) lookupFile(path string, id fileID) (Sum, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.find(fileKey(id))
	if !ok || !trusted(e.written, path, id) {
		return Sum{}, false
	}
	m.touch(e)
	return e.sum, true
}

func (m *Memo) lookupDir(fp Sum, members []source) (Sum, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.find(dirKey(fp))
	if !ok {
		return Sum{}, false
	}
	for _, s := range members {
		if !trusted(e.written, s.open, s.id) {
			return Sum{}, false
		}
	}
	m.touch(e)
	return e.sum, true
}

// addFile records the digest of a file whose identity id was seen by a stat
// made after now. A racy entry is not recorded at all.
func (m *Memo) addFile(path string, id fileID, s Sum, now time.Time) {
	if !trusted(now.UnixNano(), path, id) {
		return
	}
	m.add(memoEntry{key: fileKey(id), sum: s, written: now.UnixNano()})
}

func (m *Memo) addDir(fp Sum, members []source, s Sum, now time.Time) {
	for _, f := range members {
		if !trusted(now.UnixNano(), f.open, f.id) {
			return
		}
	}
	m.add(memoEntry{key: dirKey(fp), sum: s, written: now.UnixNano()})
}

func (m *Memo) add(e memoEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.used = m.now().UnixNano()
	if m.adds == nil {
		m.adds = make(map[string]memoEntry)
	}
	m.adds[e.key] = e
}

// touch refreshes an entry's last use, at most every memoRefresh, so a warm
// run does not rewrite the memo.
func (m *Memo) touch(e memoEntry) {
	now := m.now().UnixNano()
	if now-e.used < int64(memoRefresh) {
		return
	}
	e.used = now
	if m.adds == nil {
		m.adds = make(map[string]memoEntry)
	}
	m.adds[e.key] = e
}

// find returns the entry for key, from what this process learned or from
// the memo file. m.mu is held.
func (m *Memo) find(key string) (memoEntry, bool) {
	if e, ok := m.adds[key]; ok {
		return e, true
	}
	if !m.read {
		m.read = true
		m.data = readMemo(filepath.Join(m.dir, MemoFile))
	}
	if m.finds++; m.finds > memoScanFinds && m.index == nil {
		m.index = decodeMemo(m.data)
	}
	if m.index != nil {
		e, ok := m.index[key]
		return e, ok
	}
	needle := make([]byte, 0, len(key)+2)
	needle = append(append(append(needle, '\n'), key...), ' ')
	for d := m.data; ; {
		i := bytes.Index(d, needle)
		if i < 0 {
			return memoEntry{}, false
		}
		line := d[i+1:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j+1]
		} else {
			return memoEntry{}, false // a torn last line
		}
		if e, ok := decodeMemoLine(line); ok && e.key == key {
			if m.disagrees(d[i+1+len(line):], needle, e) {
				return memoEntry{}, false
			}
			return e, true
		}
		d = d[i+1:]
	}
}

// disagrees reports whether d holds another valid line for e's key with a
// different sum (a memo this package writes never does: decodeMemo drops
// both).
func (m *Memo) disagrees(d, needle []byte, e memoEntry) bool {
	for {
		i := bytes.Index(d, needle)
		if i < 0 {
			return false
		}
		line := d[i+1:]
		j := bytes.IndexByte(line, '\n')
		if j < 0 {
			return false
		}
		line = line[:j+1]
		if o, ok := decodeMemoLine(line); ok && o.key == e.key && o.sum != e.sum {
			return true
		}
		d = d[i+1:]
	}
}

// readMemo returns the memo file's bytes if it has the header and a sane
// size, else nil.
func readMemo(name string) []byte {
	f, err := openRegular(name, os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, memoMaxBytes+1))
	if err != nil || len(data) > memoMaxBytes || !bytes.HasPrefix(data, []byte(memoHeader)) {
		return nil
	}
	return data
}

// openRegular opens name, which must be a regular file and not a link:
// O_NONBLOCK keeps a named pipe planted in its place (anyone who may write
// a shared root can make one) from blocking the open until a writer comes,
// and the check that follows refuses it.
func openRegular(name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag|oNonblock|noFollowFlag(true), perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("not a regular file (%v)", fi.Mode().Type())}
	}
	return f, nil
}

// lineCheck returns the checksum of a memo line's body.
func lineCheck(body []byte) uint32 {
	s := sha256.Sum256(body)
	return binary.BigEndian.Uint32(s[:4])
}

// encodeMemoLine returns e's line, newline included.
func encodeMemoLine(e memoEntry) []byte {
	b := make([]byte, 0, len(e.key)+120)
	b = append(b, e.key...)
	b = append(b, ' ')
	b = append(b, e.sum.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.written, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.used, 10)
	b = fmt.Appendf(b, " %08x\n", lineCheck(b))
	return b
}

// decodeMemoLine decodes one line (with its newline); it accepts exactly
// what encodeMemoLine writes.
func decodeMemoLine(line []byte) (memoEntry, bool) {
	var e memoEntry
	if len(line) < 12 || line[len(line)-1] != '\n' {
		return e, false
	}
	body, crc := line[:len(line)-10], line[len(line)-9:len(line)-1]
	if line[len(line)-10] != ' ' || !lowerHex(crc) {
		return e, false
	}
	want, _ := strconv.ParseUint(string(crc), 16, 32)
	if lineCheck(body) != uint32(want) {
		return e, false
	}
	f := bytes.Split(body, []byte{' '})
	var nkey int
	switch {
	case len(f) == 9 && string(f[0]) == "f":
		nkey = 6
		for i, x := range f[1:6] {
			if !(i < 2 && decimal(x) || i >= 2 && signed(x)) {
				return e, false
			}
		}
		// Identities must fit their types, or fileKey would spell them
		// differently.
		for i, x := range f[1:6] {
			var err error
			if i < 2 {
				_, err = strconv.ParseUint(string(x), 10, 64)
			} else {
				_, err = strconv.ParseInt(string(x), 10, 64)
			}
			if err != nil {
				return e, false
			}
		}
	case len(f) == 5 && string(f[0]) == "d":
		nkey = 2
		if len(f[1]) != 64 || !lowerHex(f[1]) {
			return e, false
		}
	default:
		return e, false
	}
	if len(f[nkey]) != 64 || !lowerHex(f[nkey]) || !signed(f[nkey+1]) || !signed(f[nkey+2]) {
		return e, false
	}
	s, err := ParseSum(string(f[nkey]))
	if err != nil {
		return e, false
	}
	w, err1 := strconv.ParseInt(string(f[nkey+1]), 10, 64)
	u, err2 := strconv.ParseInt(string(f[nkey+2]), 10, 64)
	if err1 != nil || err2 != nil {
		return e, false
	}
	e.key = string(bytes.Join(f[:nkey], []byte{' '}))
	e.sum, e.written, e.used = s, w, u
	return e, true
}

// decimal reports whether b is a plain decimal number: digits, no sign, no
// leading zero.
func decimal(b []byte) bool {
	if len(b) == 0 || len(b) > 20 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// signed is decimal with an optional minus sign (never "-0").
func signed(b []byte) bool {
	if len(b) > 1 && b[0] == '-' {
		return b[1] != '0' && decimal(b[1:])
	}
	return decimal(b)
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return len(b) > 0
}

// decodeMemo returns the entries of a memo file's bytes, skipping lines that
// do not decode; a key that appears twice with different sums is dropped
// (two writers disagreed, so neither is trusted).
func decodeMemo(data []byte) map[string]memoEntry {
	out := make(map[string]memoEntry)
	rest, ok := bytes.CutPrefix(data, []byte(memoHeader))
	if !ok {
		return out
	}
	bad := make(map[string]bool)
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break // a torn last line
		}
		e, ok := decodeMemoLine(rest[:i+1])
		rest = rest[i+1:]
		if !ok || bad[e.key] {
			continue
		}
		if old, dup := out[e.key]; dup {
			if old.sum != e.sum {
				delete(out, e.key)
				bad[e.key] = true
				continue
			}
			e = newer(old, e)
		}
		out[e.key] = e
	}
	return out
}

func newer(a, b memoEntry) memoEntry {
	if b.used > a.used {
		a.used = b.used
	}
	a.written = min(a.written, b.written)
	return a
}

// encodeMemo writes the entries, most recently used first, keeping at most
// memoMaxEntries.
func encodeMemo(entries map[string]memoEntry) []byte {
	list := make([]memoEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].used != list[j].used {
			return list[i].used > list[j].used
		}
		return list[i].key < list[j].key
	})
	if len(list) > memoMaxEntries {
		list = list[:memoMaxEntries]
	}
	b := []byte(memoHeader)
	for _, e := range list {
		b = append(b, encodeMemoLine(e)...)
	}
	return b
}

// ErrMemoBusy is returned by Flush when another process held the memo's
// lock for longer than a second; what was learned is kept for a later Flush.
var ErrMemoBusy = errors.New("digest: memo busy")

// Flush merges what was learned into the memo file. A failure leaves the
// memo as it was (digests stay correct, only slower next time), so callers
// usually report it at most as a warning.
func (m *Memo) Flush() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.adds) == 0 {
		return nil
	}
	if err := os.MkdirAll(m.dir, 0o777); err != nil {
		return err
	}
	perm := m.Perm
	if perm == 0 {
		perm = 0o644
	}
	name := filepath.Join(m.dir, MemoFile)
	lock, err := openRegular(name+".lock", os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return err
	}
	defer lock.Close() // releases the flock
	if fi, err := lock.Stat(); err == nil && fi.Mode().Perm() != perm {
		// The umask cut the mode of a lock file made just now: a shared
		// root's group must be able to open it for writing. (Someone else's
		// file: not ours to change, and the error is of no interest.)
		lock.Chmod(perm)
	}
	for deadline := time.Now().Add(memoLockWait); ; {
		ok, err := tryLock(lock)
		if ok || err != nil {
			break // without flock support (err), merge-on-write still keeps the file sound
		}
		if time.Now().After(deadline) {
			return ErrMemoBusy
		}
		time.Sleep(2 * time.Millisecond)
	}
	entries := decodeMemo(readMemo(name))
	for k, e := range m.adds {
		if old, ok := entries[k]; ok {
			if old.sum != e.sum {
				delete(entries, k) // disagreement: trust neither
				continue
			}
			e = newer(old, e)
		}
		entries[k] = e
	}
	data := encodeMemo(entries)
	// NoFollow: the memo lives in a cache root others may share, where a
	// link planted as the memo must not steer this write elsewhere.
	f, err := atomicfile.CreateWith(name, atomicfile.Options{Perm: perm, NoFollow: true})
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return f.Named(err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	m.data, m.read, m.index, m.adds = data, true, nil, nil
	return nil
}
