// Package bodyversion holds the version of lib/request's body formatting,
// part of every cache key's salt (cachekey.CurrentSalt), apart from
// lib/request so that lib/cachekey links no body formatter.
package bodyversion

// Version is the version of the formatting of request bodies (key order,
// extras, max-token fields), and of the metadata aiperf-pack writes beside
// them. Whoever changes the bytes of a formatted body bumps it; the golden
// pair in lib/cmd/hashcmd/testdata/golden fails, naming it, until then. 2:
// the store records the settings it was built with (store.MetaSettings).
// 3: a payload's cap is its record's; completions omit a 0.
const Version = 3
