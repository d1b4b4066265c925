package store

// Entry is one index row (one turn of one session).
type Entry struct {
	Line        uint64 // source trace line number (1-based), informational
	Session     uint32 // dense session number 0..NumSessions-1
	Turn        uint32 // turn number within its session, 0-based
	TimeNS      int64  // timestamp (FlagTimestamp) or delay (FlagDelay) in nanoseconds, else 0
	MaxTokens   uint32 // valid when FlagMaxTokens
	InputTokens uint32 // prompt tokens the record was built for (0 = unknown)
	Flags       uint32
}

// Entry flags. The store keeps them as given; their meaning belongs to the
// stages that write and replay records.
const (
	FlagTimestamp uint32 = 1 << iota // TimeNS is an absolute timestamp from trace start
	FlagDelay                        // TimeNS is a delay after the previous turn completes
	FlagMaxTokens                    // MaxTokens is set
	FlagVerbatim                     // payload was given verbatim (not formatted by pack)
)
