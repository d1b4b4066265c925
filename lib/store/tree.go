package store

import (
	"fmt"
	"strconv"
	"strings"
)

// MetaTree is the session tree of an agentic store (weka_trace records):
// a line per child session, "CHILD PARENT SPAWN JOIN AGENT" (session
// numbers, the parent's turns after which the child starts and that waits
// for it, -1 for none, and the agent: a subagent_type, or "chain"),
// children in increasing number. A session without a line is a root.
const MetaTree = "tree"

// TreeNode is a child session of a store's session tree.
type TreeNode struct {
	Session, Parent     uint32
	SpawnTurn, JoinTurn int64
	Agent               string
}

// EncodeTree is MetaTree's value for nodes (in increasing Session).
func EncodeTree(nodes []TreeNode) string {
	var b strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&b, "%d %d %d %d %s\n", n.Session, n.Parent, n.SpawnTurn, n.JoinTurn, strconv.Quote(n.Agent))
	}
	return b.String()
}

// Tree returns the store's session tree (nil without one), checked
// against its sessions: every child and parent a session, a parent before
// its child, children in increasing number.
func (r *Reader) Tree() ([]TreeNode, error) {
	v, ok := r.meta[MetaTree]
	if !ok {
		return nil, nil
	}
	var out []TreeNode
	for i, line := range strings.Split(strings.TrimSuffix(v, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, " ", 5)
		bad := func(why string) error {
			return fmt.Errorf("store: meta %q line %d: %s: %q", MetaTree, i+1, why, line)
		}
		if len(f) != 5 {
			return nil, bad("want CHILD PARENT SPAWN JOIN AGENT")
		}
		var n TreeNode
		c, err1 := strconv.ParseUint(f[0], 10, 32)
		p, err2 := strconv.ParseUint(f[1], 10, 32)
		s, err3 := strconv.ParseInt(f[2], 10, 64)
		j, err4 := strconv.ParseInt(f[3], 10, 64)
		a, err5 := strconv.Unquote(f[4])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
			return nil, bad("not numbers and a quoted agent")
		}
		n = TreeNode{Session: uint32(c), Parent: uint32(p), SpawnTurn: s, JoinTurn: j, Agent: a}
		switch {
		case int(c) >= r.ns || p >= c:
			return nil, bad("child and parent must be sessions of the store, the parent first")
		case len(out) > 0 && out[len(out)-1].Session >= n.Session:
			return nil, bad("children out of order")
		}
		out = append(out, n)
	}
	return out, nil
}
