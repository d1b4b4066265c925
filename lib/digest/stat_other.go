//go:build !linux

package digest

import (
	"io/fs"
	"os"
	"time"
)

// Elsewhere the memo is off (statID reports no identity) and opens use the
// plain flags.

const oNonblock = 0

func noFollowFlag(bool) int { return 0 }

func isSymlinkErr(error) bool { return false }

func statID(fs.FileInfo) (fileID, bool) { return fileID{}, false }

func adviseSequential(*os.File) {}

func granularity(string, fileID) time.Duration { return 2 * time.Second }

func tryLock(*os.File) (bool, error) { return true, nil }
