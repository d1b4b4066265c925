# The setup that replay-ollama.sh and endpoints-ollama.sh share (sourced after common.sh, not
# run): a temporary folder removed on exit with the mock they start, the outputs' folder, the
# binaries and an aiperf-mock on loopback.

# replay_setup BINARY...: set tmp (a temporary folder), out (AIPERF_REAL_OUT or a folder in tmp)
# and bindir (AIPERF_BIN, default bin/ of the repository; when one of the BINARIES is missing
# there, all of them are built into tmp), and remove tmp and stop the mock on exit.
replay_setup() {
	tmp=$(mktemp -d)
	mockpid=
	trap replay_cleanup EXIT
	trap 'exit 130' INT TERM
	out=${AIPERF_REAL_OUT:-$tmp/out}
	mkdir -p "$out"
	bindir=${AIPERF_BIN:-$repo/bin}
	local b pkgs=()
	for b in "$@"; do
		pkgs+=("./cmd/$b")
	done
	for b in "$@"; do
		if [ ! -x "$bindir/$b" ]; then
			say "building the binaries into $tmp/bin ($bindir/$b is missing)"
			(cd "$repo" && go build -o "$tmp/bin/" "${pkgs[@]}") || exit 2
			bindir=$tmp/bin
			break
		fi
	done
}

replay_cleanup() {
	stop_mock
	rm -rf "$tmp"
}

# start_mock ARG...: start $bindir/aiperf-mock on a free loopback port with ARGs and set mockurl.
start_mock() {
	"$bindir/aiperf-mock" --listen 127.0.0.1:0 "$@" >"$tmp/mock.addr" 2>"$tmp/mock.err" &
	mockpid=$!
	local _
	for _ in $(seq 100); do
		[ -s "$tmp/mock.addr" ] && break
		kill -0 "$mockpid" 2>/dev/null || die "aiperf-mock exited: $(cat "$tmp/mock.err")"
		sleep 0.05
	done
	mockurl=$(head -n 1 "$tmp/mock.addr")
	case $mockurl in http://127.0.0.1:*) ;; *) die "aiperf-mock printed no loopback address: $mockurl" ;; esac
}

# stop_mock: stop the mock start_mock started (by its pid), if it runs.
stop_mock() {
	if [ -n "${mockpid:-}" ]; then
		kill -TERM "$mockpid" 2>/dev/null || true
		wait "$mockpid" 2>/dev/null || true
		mockpid=
	fi
}
