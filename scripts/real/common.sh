# Helpers shared by the scripts in scripts/real (sourced, not run).

# say MSG...: a diagnostic line on stderr, named after the script.
say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { say "$@"; exit 1; }
# requests RESULTS: a run's results.jsonl without its end line ({"v":1,"end":true,...}, not a
# request), one request a line, for the checks that count or index them.
requests() { jq -c 'select(.end != true)' "$1"; }

# need_debs PKG...: install the Debian packages among PKG that are not installed yet.
# Does nothing (and asks nothing of apt) when all of them are there.
need_debs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get to install them"
	local sudo=
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || die "missing packages ${missing[*]}: run as root or install them"
		sudo=sudo
	fi
	say "installing ${missing[*]}"
	# A fresh machine has no package lists; an old list may lack the package. Update once, then retry.
	if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
		$sudo apt-get update -qq >/dev/null
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
}

# need_cmds CMD:PKG...: make sure each command exists, installing its Debian package if not.
need_cmds() {
	local pkgs=() cp
	for cp in "$@"; do
		command -v "${cp%%:*}" >/dev/null || pkgs+=("${cp#*:}")
	done
	[ ${#pkgs[@]} -eq 0 ] || need_debs "${pkgs[@]}"
}
