package store

// Entry is one index row (one turn of one session).
type Entry struct {
	Line        uint64 // the record's line field: the row's place among the trace rows kept (1-based), informational
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
	// FlagContextDeltas: the session is in context mode
	// deltas_without_responses: the body holds only this turn's new
	// messages, and replay sends the session's earlier turns, each followed
	// by the server's live reply, before them.
	FlagContextDeltas
	// FlagContextMessageArray: the session is in context mode
	// message_array_with_responses: the body carries its whole conversation
	// and replay sends it as stored. Every turn of a session has the same
	// context flag, or none (the trace did not say; replay chooses).
	FlagContextMessageArray
)
