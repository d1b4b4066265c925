#!/usr/bin/env bash
# nginx.sh: aiperf-replay through Debian's nginx (installed when missing), as vLLM and SGLang
# deployments put it in front: nginx listens on a unix socket and proxies to aiperf-mock on
# another, gzipping the answers (event streams too), and redirects one prefix with a 307.
#
#   unix+gzip  aiperf-replay --url unix://NGINX.sock: every request HTTP 200 with its usage, the
#              stream parsed, and nginx's log shows every answer went out gzip-encoded
#   redirect   --path /old/v1/chat/completions (nginx: return 307 to /v1/...): exit 1, every
#              request failed with 307 and a message naming nginx's Location
#
# No TCP port is taken. Environment: AIPERF_BIN (folder with aiperf-pack, aiperf-replay,
# aiperf-mock; default bin/ of the repository, built into a temp folder when one is missing),
# AIPERF_REAL_OUT (keep the outputs there). Exit 0 when every check passes, 1 if any fails, 2 on
# trouble.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"
. "$here/replay-common.sh"
repo=$(cd "$here/../.." && pwd)
need_cmds jq:jq nginx:nginx-light

replay_setup aiperf-pack aiperf-replay aiperf-mock
chmod 755 "$tmp"
nginxpid=
cleanup() {
	if [ -n "$nginxpid" ]; then
		kill -TERM "$nginxpid" 2>/dev/null || true
		wait "$nginxpid" 2>/dev/null || true
	fi
	replay_cleanup
}
trap cleanup EXIT

"$bindir/aiperf-mock" --listen "unix://$tmp/mock.sock" --ttft 5ms --itl 1ms >"$tmp/mock.addr" 2>"$tmp/mock.err" &
mockpid=$!
for _ in $(seq 100); do
	[ -s "$tmp/mock.addr" ] && break
	kill -0 "$mockpid" 2>/dev/null || die "aiperf-mock exited: $(cat "$tmp/mock.err")"
	sleep 0.05
done
chmod 666 "$tmp/mock.sock" # nginx's workers run as another user

mkdir -p "$tmp/nginx"
user=
[ "$(id -u)" -eq 0 ] && user="user nobody nogroup;"
cat >"$tmp/nginx/nginx.conf" <<CONF
$user
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 256; }
http {
	access_log $tmp/nginx/access.log;
	log_format coding '\$status \$sent_http_content_encoding \$request_uri';
	client_body_temp_path $tmp/nginx/body;
	proxy_temp_path $tmp/nginx/proxy;
	fastcgi_temp_path $tmp/nginx/fastcgi;
	uwsgi_temp_path $tmp/nginx/uwsgi;
	scgi_temp_path $tmp/nginx/scgi;
	server {
		listen unix:$tmp/nginx.sock;
		access_log $tmp/nginx/coding.log coding;
		gzip on;
		gzip_proxied any;
		gzip_min_length 0;
		gzip_types application/json text/event-stream;
		location /old/ {
			rewrite ^/old(/.*)\$ \$1;
			return 307 \$uri;
		}
		location / {
			proxy_pass http://unix:$tmp/mock.sock:;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_buffering off;
		}
	}
}
CONF
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' 2>"$tmp/nginx/start.err" &
nginxpid=$!
for _ in $(seq 100); do
	[ -S "$tmp/nginx.sock" ] && break
	kill -0 "$nginxpid" 2>/dev/null || { say "nginx exited: $(cat "$tmp/nginx/start.err" "$tmp/nginx/error.log" 2>/dev/null)"; exit 2; }
	sleep 0.05
done
[ -S "$tmp/nginx.sock" ] || { say "nginx made no socket"; exit 2; }
say "nginx $(nginx -v 2>&1 | sed 's/.*: //') on unix:$tmp/nginx.sock in front of aiperf-mock on unix:$tmp/mock.sock"

for i in 1 2 3 4 5 6; do
	printf '{"v":1,"line":%d,"session_id":"s%d","turn":0,"max_tokens":16,"prompt":"prompt %d of the nginx check"}\n' "$i" "$i" "$i"
done >"$tmp/records.jsonl"
echo '{"v":1,"end":true,"records":6}' >>"$tmp/records.jsonl"
"$bindir/aiperf-pack" --model mock-model --streaming --include-usage -o "$tmp/s.aipk" "$tmp/records.jsonl"

rc=0
pass() { say "ok: $*"; }
fail() { say "FAIL: $*"; rc=1; }

# unix+gzip
if "$bindir/aiperf-replay" -q --no-server-metrics --concurrency 2 -H "Accept-Encoding: gzip" --url "unix://$tmp/nginx.sock" --force -o "$out/gzip" "$tmp/s.aipk" 2>"$tmp/gzip.err"; then
	n=$(requests "$out/gzip/results.jsonl" | jq -s '[.[] | select(.status == 200 and .error == null and .output_tokens == 16 and .first_token_unix_ns > 0 and .streamed == true)] | length')
	g=$(grep -c '^200 gzip /v1/chat/completions$' "$tmp/nginx/coding.log" || true)
	if [ "$n" -eq 6 ] && [ "$g" -eq 6 ]; then
		pass "unix+gzip: 6 of 6 streamed answers through nginx, all gzip-encoded"
	else
		fail "unix+gzip: $n of 6 requests complete, $g of 6 answers gzip in nginx's log ($(tr '\n' ';' <"$tmp/nginx/coding.log"))"
	fi
else
	fail "unix+gzip: aiperf-replay failed: $(cat "$tmp/gzip.err")"
fi

# redirect
set +e
"$bindir/aiperf-replay" -q --no-server-metrics --url "unix://$tmp/nginx.sock" --path /old/v1/chat/completions --force -o "$out/redirect" "$tmp/s.aipk" 2>"$tmp/redirect.err"
code=$?
set -e
if [ "$code" -eq 1 ] && grep -q 'FAILED: every request failed (6 of 6); the most frequent error (6): 307 Temporary Redirect: redirected to http://localhost/v1/chat/completions: redirects are not followed' "$tmp/redirect.err"; then
	pass "redirect: exit 1, 6 of 6 failed with nginx's 307 and its Location"
else
	fail "redirect: exit $code: $(cat "$tmp/redirect.err")"
fi
exit $rc
