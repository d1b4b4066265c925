package digest

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const oNonblock = syscall.O_NONBLOCK

func noFollowFlag(on bool) int {
	if on {
		return syscall.O_NOFOLLOW
	}
	return 0
}

// isSymlinkErr reports the error of an O_NOFOLLOW open of a symlink.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }

// statID returns the identity the memo keys a file by.
func statID(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{
		dev:   st.Dev,
		ino:   st.Ino,
		size:  st.Size,
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
	}, true
}

// adviseSequential doubles the kernel's read-ahead for f (a cold read then
// issues larger requests to the disk).
func adviseSequential(f *os.File) {
	if c, err := f.SyscallConn(); err == nil {
		c.Control(func(fd uintptr) { unix.Fadvise(int(fd), 0, 0, unix.FADV_SEQUENTIAL) })
	}
}

// coarseRes is the tick of the clock the kernel stamps inode times with
// (current_time() reads the coarse realtime clock): two changes within one
// tick can leave the same mtime and ctime.
var coarseRes = sync.OnceValue(func() time.Duration {
	var ts unix.Timespec
	if unix.ClockGetres(unix.CLOCK_REALTIME_COARSE, &ts) != nil || ts.Nano() <= 0 {
		return 10 * time.Millisecond
	}
	return time.Duration(ts.Nano())
})

// File systems whose timestamps come from another clock (a server's) or are
// stored in whole or double seconds.
var coarseFS = map[int64]bool{
	0x6969:     true, // NFS
	0x517b:     true, // SMB
	0xff534d42: true, // CIFS
	0xfe534d42: true, // SMB2
	0x65735546: true, // FUSE (sshfs, virtiofs, ...)
	0x01021997: true, // 9P
	0x00c36400: true, // Ceph
	0x5346414f: true, // AFS
	0x73757245: true, // Coda
	0x4d44:     true, // FAT
	0x2011bab0: true, // exFAT
	0x4244:     true, // HFS
	0x482b:     true, // HFS+
}

var fsGran sync.Map // device → time.Duration

// granularity returns how far apart two changes of the file at path must be
// for its mtime or ctime to tell them apart, with a margin:
//
//   - 2 s when its ctime has no sub-second part (a file system that stores
//     whole seconds, such as ext4 with 128-byte inodes) or when the file
//     system is a network or FUSE one (its server's clock and rounding) or
//     FAT/exFAT/HFS (2 s and 1 s timestamps);
//   - else twice the tick of the kernel's coarse clock (4 ms at HZ=250), as
//     reported by clock_getres(CLOCK_REALTIME_COARSE).
func granularity(path string, id fileID) time.Duration {
	if id.ctime%1e9 == 0 {
		return 2 * time.Second
	}
	if g, ok := fsGran.Load(id.dev); ok {
		return g.(time.Duration)
	}
	g := 2 * coarseRes()
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil || coarseFS[int64(st.Type)] {
		g = 2 * time.Second
	}
	fsGran.Store(id.dev, g)
	return g
}

// tryLock takes an exclusive lock on f without waiting.
func tryLock(f *os.File) (bool, error) {
	c, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var lerr error
	if err := c.Control(func(fd uintptr) { lerr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) }); err != nil {
		return false, err
	}
	if errors.Is(lerr, unix.EWOULDBLOCK) {
		return false, nil
	}
	return lerr == nil, lerr
}
