#!/usr/bin/env bash
# ollama.sh: a real OpenAI-compatible inference server (ollama) on loopback, built from the Go
# module proxy, serving a tiny random-weight Qwen3 model, for tests that must not stop at a mock.
#
#   ollama.sh build   build ollama into the cache (once; later calls return at once)
#   ollama.sh model   write the tiny model and its embeddings twin (MODEL-embed), register them
#                     with ollama (once)
#   ollama.sh start   start `ollama serve` on 127.0.0.1:<free port>, load the model, print
#                     URL=http://127.0.0.1:PORT and MODEL=NAME on stdout (for eval)
#   ollama.sh stop    stop the server that `start` started (by its pid, nothing else)
#   ollama.sh status  print the state of the running server, exit 1 if none
#
# Environment:
#   AIPERF_REAL_CACHE          cache folder (default ~/.cache/aiperf-real): binary, model, logs
#   AIPERF_REAL_STATE          state file of the running server (default $AIPERF_REAL_CACHE/run/ollama.state);
#                              give each concurrent server its own
#   AIPERF_REAL_MODEL          model name (default aiperf-tiny-qwen3)
#   AIPERF_REAL_PARALLEL       OLLAMA_NUM_PARALLEL (default 4)
#   AIPERF_REAL_START_TIMEOUT  seconds to wait for the server and the model (default 120)
#
# Needs Go and a C/C++ compiler; installs the Debian packages it lacks (nlohmann-json3-dev,
# libstb-dev, g++ ...) with apt-get. Nothing is written inside the repository.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"
repo=$(cd "$here/../.." && pwd)

version=v0.17.4
cache=${AIPERF_REAL_CACHE:-$HOME/.cache/aiperf-real}
odir=$cache/ollama-$version
bin=$odir/bin/ollama
models=$cache/models
run=$cache/run
state=${AIPERF_REAL_STATE:-$run/ollama.state}
model=${AIPERF_REAL_MODEL:-aiperf-tiny-qwen3}
parallel=${AIPERF_REAL_PARALLEL:-4}
start_timeout=${AIPERF_REAL_START_TIMEOUT:-120}

# The model file's revision: bump it when tinymodel's output changes, so caches rebuild it.
model_rev=1
gguf=$cache/tiny-qwen3-r$model_rev.gguf
# The embeddings model: the same weights with a pooling type (see do_model).
embed_model=$model-embed
gguf_embed=$cache/tiny-qwen3-embed-r$model_rev.gguf

mkdir -p "$cache" "$run"

# locked FN: run FN holding the cache's lock, so two builds (or two model writes) never race.
locked() {
	exec 9>"$cache/.lock"
	flock 9
	"$@"
	flock -u 9
}

# The header-only audio decoder that llama.cpp's mtmd-helper.cpp includes is not in the module
# zip (its vendor folders are left out). ollama never decodes audio through it, so a stub that
# declares what mtmd-helper.cpp uses, and fails every decode, is enough to compile.
write_miniaudio_stub() {
	local dir=$odir/include/miniaudio
	mkdir -p "$dir"
	cat >"$dir/miniaudio.h.tmp" <<'EOF'
/* Stub for miniaudio.h written by aiperf's scripts/real/ollama.sh: declares the part of the
 * API that llama.cpp's tools/mtmd/mtmd-helper.cpp uses. Every decode fails with MA_ERROR, so
 * audio input is rejected; nothing else in ollama uses it. */
#ifndef AIPERF_MINIAUDIO_STUB_H
#define AIPERF_MINIAUDIO_STUB_H
#include <stddef.h>
#include <stdint.h>
#ifndef MA_API
#define MA_API static
#endif
typedef uint32_t ma_uint32;
typedef uint64_t ma_uint64;
typedef int ma_result;
#define MA_SUCCESS 0
#define MA_ERROR (-1)
typedef enum { ma_format_unknown = 0, ma_format_f32 = 5 } ma_format;
typedef enum { ma_encoding_format_unknown = 0, ma_encoding_format_wav } ma_encoding_format;
typedef struct { ma_format format; ma_uint32 channels; ma_uint32 sampleRate; } ma_decoder_config;
typedef struct { int unused; } ma_decoder;
typedef struct { ma_encoding_format encodingFormat; ma_format format; ma_uint32 channels; ma_uint32 sampleRate; } ma_encoder_config;
typedef struct { int unused; } ma_encoder;
MA_API ma_decoder_config ma_decoder_config_init(ma_format f, ma_uint32 ch, ma_uint32 rate) {
	ma_decoder_config c = {f, ch, rate};
	return c;
}
MA_API ma_result ma_decoder_init_memory(const void *p, size_t n, const ma_decoder_config *c, ma_decoder *d) {
	(void)p; (void)n; (void)c; (void)d;
	return MA_ERROR;
}
MA_API ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *d, ma_uint64 *n) {
	(void)d; *n = 0;
	return MA_ERROR;
}
MA_API ma_result ma_decoder_read_pcm_frames(ma_decoder *d, void *out, ma_uint64 n, ma_uint64 *got) {
	(void)d; (void)out; (void)n; *got = 0;
	return MA_ERROR;
}
MA_API ma_result ma_decoder_uninit(ma_decoder *d) {
	(void)d;
	return MA_SUCCESS;
}
MA_API ma_encoder_config ma_encoder_config_init(ma_encoding_format e, ma_format f, ma_uint32 ch, ma_uint32 rate) {
	ma_encoder_config c = {e, f, ch, rate};
	return c;
}
MA_API ma_result ma_encoder_init_file(const char *path, const ma_encoder_config *c, ma_encoder *e) {
	(void)path; (void)c; (void)e;
	return MA_ERROR;
}
MA_API ma_result ma_encoder_write_pcm_frames(ma_encoder *e, const void *in, ma_uint64 n, ma_uint64 *done) {
	(void)e; (void)in; (void)n; *done = 0;
	return MA_ERROR;
}
MA_API void ma_encoder_uninit(ma_encoder *e) { (void)e; }
#endif
EOF
	mv "$dir/miniaudio.h.tmp" "$dir/miniaudio.h"
}

# ggml's CPU kernels pick their SIMD code at compile time, and cgo's default flags (-g -O2) target
# the baseline ISA: on these 2 AVX2 cores that is ~4x slower per output token and ~8x slower on a
# 2,000-token prefill than -march=native. The binary is built where it runs, so native it is
# (AIPERF_REAL_CFLAGS overrides). The stamp ties the cached binary to the flags and the CPU.
# On a CPU with AMX, -march=native makes ggml-cpu.cpp call ggml's AMX buffer type, whose source the
# Go package does not compile (the link fails: undefined ggml_backend_amx_buffer_type): AMX is off.
native="-O3 -march=native"
grep -qw amx_tile /proc/cpuinfo 2>/dev/null && native="$native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
cflags=${AIPERF_REAL_CFLAGS:-$native}
build_stamp() {
	{
		echo "$version $cflags $(uname -m)"
		grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null || true
	} | sha256sum | cut -d' ' -f1
}

have_bin() {
	[ -x "$bin" ] && [ "$(cat "$bin.stamp" 2>/dev/null)" = "$(build_stamp)" ] && "$bin" --version >/dev/null 2>&1
}

do_build() {
	if have_bin; then
		say "ollama $version: $bin (cached)"
		return
	fi
	[ ! -e "$bin" ] || say "rebuilding $bin: built for other flags or another CPU"
	command -v go >/dev/null || die "go not found: ollama is built from the Go module proxy"
	need_cmds gcc:gcc g++:g++
	# The module zip lacks llama.cpp's vendor/ folder: Debian ships the same header-only libraries.
	need_debs nlohmann-json3-dev libstb-dev
	write_miniaudio_stub
	local t0=$SECONDS tmp=$odir/bin.tmp.$$
	rm -rf "$tmp"
	say "building github.com/ollama/ollama@$version with $cflags (several minutes on 2 cores the first time)"
	# The compiler's output (llama.cpp's sources warn a lot at -O3) goes to a log, shown on failure.
	local log=$odir/build.log
	mkdir -p "$odir"
	if ! (cd "$cache" && GOBIN=$tmp CGO_ENABLED=1 GOTOOLCHAIN=local GOFLAGS= GOWORK=off \
		CGO_CPPFLAGS="-I$odir/include ${CGO_CPPFLAGS:-}" CGO_CFLAGS="$cflags" CGO_CXXFLAGS="$cflags" \
		go install -trimpath -ldflags "-X github.com/ollama/ollama/version.Version=${version#v}" \
		"github.com/ollama/ollama@$version") >"$log" 2>&1; then
		grep -v '^go: downloading' "$log" | tail -n 30 >&2
		rm -rf "$tmp"
		die "building ollama failed (log: $log)"
	fi
	mkdir -p "$odir/bin"
	mv "$tmp/ollama" "$bin"
	build_stamp >"$bin.stamp"
	rm -rf "$tmp"
	say "ollama $version: $bin (built in $((SECONDS - t0)) s)"
}

# The Modelfile of a model file. TEMPLATE: ollama's legacy (non-.Messages) form, rendered once
# per turn, with nothing of its own: /v1/completions sends the prompt exactly as given
# (prompt_tokens equals the prompt's own token count), and /v1/chat/completions sends the
# messages' contents back to back. num_thread 1: with one thread per model the 2 cores serve 4
# parallel streams ~2x faster than with two threads, which collapse when anything else uses the
# cores.
modelfile() {
	cat <<EOF
FROM $1
TEMPLATE """{{ if .System }}{{ .System }}{{ end }}{{ .Prompt }}{{ .Response }}"""
PARAMETER num_thread 1
PARAMETER num_ctx 8192
EOF
}

# write_gguf FILE [TINYMODEL-FLAG...]: write a tiny model file once.
write_gguf() {
	local f=$1 t0=$SECONDS
	shift
	[ ! -s "$f" ] || return 0
	say "writing $f"
	(cd "$here/tinymodel" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly GOWORK=off CGO_ENABLED=0 \
		go run . -tokenizer "$repo/lib/tokenizer/builtin/qwen3" -o "$f" "$@") ||
		die "writing the model failed"
	say "model file: $(du -h "$f" | cut -f1) in $((SECONDS - t0)) s"
}

# register NAME GGUF: `ollama create` NAME from GGUF's Modelfile, unless that was done (stamped
# with the Modelfile's digest).
register() {
	local name=$1 want stampfile=$models/.aiperf-$1.stamp
	want=$(modelfile "$2" | sha256sum | cut -d' ' -f1)
	if [ -f "$stampfile" ] && [ "$(cat "$stampfile")" = "$want" ] &&
		[ -f "$models/manifests/registry.ollama.ai/library/$name/latest" ]; then
		say "model $name: registered (cached)"
		return
	fi
	# `ollama create` talks to a server: run one of our own for it, on its own state file.
	tmpstate=$run/create.$$.state mf=$run/Modelfile.$$
	modelfile "$2" >"$mf"
	AIPERF_REAL_STATE=$tmpstate start_server noload >/dev/null
	trap 'AIPERF_REAL_STATE=$tmpstate stop_server; rm -f "$mf" "$mf.out"' EXIT
	local url
	url=$(sed -n 's/^URL=//p' "$tmpstate")
	if ! HOME=$cache/home OLLAMA_HOST=${url#http://} "$bin" create "$name" -f "$mf" >"$mf.out" 2>&1; then
		tr '\r' '\n' <"$mf.out" | tail -n 5 >&2
		die "ollama create $name failed"
	fi
	rm -f "$mf.out"
	AIPERF_REAL_STATE=$tmpstate stop_server
	rm -f "$mf"
	trap - EXIT
	echo "$want" >"$stampfile"
	say "model $name: registered"
}

# do_model: the chat model, and its twin with a pooling type (the last token's, as Qwen3's
# embedding models pool), which ollama serves on /v1/embeddings: ollama reads a model's
# capabilities from its file, and refuses embeddings (501) of a file without a pooling type.
do_model() {
	do_build
	write_gguf "$gguf"
	register "$model" "$gguf"
	write_gguf "$gguf_embed" -pooling 3
	register "$embed_model" "$gguf_embed"
}

# proc_start PID: the process's start time in clock ticks since boot (field 22 of /proc/PID/stat),
# which tells a pid we started from a later process that reuses the number.
proc_start() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }

# start_server [noload]: start `ollama serve` on a free loopback port, wait until it answers (and,
# unless noload, until the model is loaded), write the state file, print URL= and MODEL=.
start_server() {
	local st=${AIPERF_REAL_STATE:-$state}
	have_bin || die "ollama is not built (for this CPU): run '$0 build' first"
	if [ -f "$st" ]; then
		local opid ostart
		opid=$(sed -n 's/^PID=//p' "$st")
		ostart=$(sed -n 's/^START=//p' "$st")
		if [ -n "$opid" ] && [ "$(proc_start "$opid")" = "$ostart" ]; then
			die "a server from $st is still running (pid $opid): '$0 stop' it first"
		fi
		rm -f "$st"
	fi
	mkdir -p "$models" "$cache/home" "$(dirname "$st")"
	local log t0
	log=$(mktemp "$run/ollama.XXXXXX.log")
	t0=$(date +%s.%N)
	# Port 0: the kernel picks a free port and the server logs it ("Listening on ADDR"), so no
	# other process can take it between choosing and binding. setsid: a process group of its
	# own (its runner subprocesses included), out of reach of the terminal's Ctrl-C, which the
	# caller's trap turns into a clean stop.
	# HOME: ollama serve writes a key pair under ~/.ollama; it goes into the cache instead.
	HOME=$cache/home OLLAMA_HOST=127.0.0.1:0 OLLAMA_MODELS=$models OLLAMA_FLASH_ATTENTION=0 \
		OLLAMA_NUM_PARALLEL=$parallel OLLAMA_KEEP_ALIVE=-1 OLLAMA_MAX_LOADED_MODELS=1 \
		OLLAMA_NOPRUNE=1 OLLAMA_NO_CLOUD=1 \
		setsid "$bin" serve >"$log" 2>&1 </dev/null 9>&- &
	local pid=$! pstart addr=
	pstart=$(proc_start "$pid")
	# abort MSG: a start that fails stops what it started.
	abort() {
		tail -n 20 "$log" >&2
		kill -KILL -- "-$pid" 2>/dev/null || true
		rm -f "$st"
		die "$@"
	}
	local deadline=$((SECONDS + start_timeout))
	while [ -z "$addr" ]; do
		kill -0 "$pid" 2>/dev/null || abort "ollama serve exited before listening (log: $log)"
		[ $SECONDS -lt $deadline ] || abort "ollama serve did not listen within ${start_timeout}s (log: $log)"
		addr=$(sed -n 's/.*Listening on \(127\.0\.0\.1:[0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
		[ -n "$addr" ] || sleep 0.05
	done
	local url=http://$addr
	{
		echo "PID=$pid"
		echo "START=$pstart"
		echo "URL=$url"
		echo "MODEL=$model"
		echo "LOG=$log"
	} >"$st.tmp"
	mv "$st.tmp" "$st"
	until curl -fsS --max-time 2 "$url/api/version" >/dev/null 2>&1; do
		[ $SECONDS -lt $deadline ] || abort "ollama at $url did not answer within ${start_timeout}s (log: $log)"
		sleep 0.05
	done
	local t1
	t1=$(date +%s.%N)
	if [ "${1:-}" != noload ]; then
		# An empty generate request loads the model (and its runner) and returns when it is ready,
		# so the first measured request does not pay for it. OLLAMA_KEEP_ALIVE=-1 keeps it loaded.
		local left=$((deadline - SECONDS))
		[ $left -gt 0 ] || left=1
		curl -fsS --max-time "$left" "$url/api/generate" -d "{\"model\":\"$model\"}" >/dev/null ||
			abort "loading $model failed (log: $log); did '$0 model' run?"
	fi
	say "ollama $version pid $pid at $url: listening after $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s, ready after $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s (log: $log)"
	echo "URL=$url"
	echo "MODEL=$model"
}

# stop_server: stop the server named in the state file, if it is still the process we started.
stop_server() {
	local st=${AIPERF_REAL_STATE:-$state}
	[ -f "$st" ] || { say "no server to stop ($st absent)"; return 0; }
	local pid pstart log
	pid=$(sed -n 's/^PID=//p' "$st")
	pstart=$(sed -n 's/^START=//p' "$st")
	log=$(sed -n 's/^LOG=//p' "$st")
	if [ -z "$pid" ] || [ "$(proc_start "$pid")" != "$pstart" ]; then
		say "server pid ${pid:-?} already gone"
		rm -f "$st"
		return 0
	fi
	# SIGTERM: ollama closes its listener and unloads its runners, then exits.
	kill -TERM "$pid" 2>/dev/null || true
	local i
	for i in $(seq 100); do
		[ "$(proc_start "$pid")" = "$pstart" ] || break
		sleep 0.1
	done
	if [ "$(proc_start "$pid")" = "$pstart" ]; then
		say "pid $pid still running after 10 s: SIGKILL to its process group"
		kill -KILL -- "-$pid" 2>/dev/null || true
	fi
	# Runners it started share its process group (setsid made pid the group's id); none should
	# outlive it, but if one does, it is ours to end.
	if pgrep -g "$pid" >/dev/null 2>&1; then
		kill -KILL -- "-$pid" 2>/dev/null || true
	fi
	rm -f "$st"
	[ -n "$log" ] && [ -z "${AIPERF_REAL_KEEP_LOG:-}" ] && rm -f "$log"
	say "stopped ollama pid $pid"
}

status() {
	local st=${AIPERF_REAL_STATE:-$state}
	[ -f "$st" ] || { say "no server ($st absent)"; return 1; }
	local pid pstart
	pid=$(sed -n 's/^PID=//p' "$st")
	pstart=$(sed -n 's/^START=//p' "$st")
	[ "$(proc_start "$pid")" = "$pstart" ] || { say "server pid $pid is gone"; return 1; }
	grep -E '^(PID|URL|MODEL|LOG)=' "$st"
}

case ${1:-} in
build) locked do_build ;;
model) locked do_model ;;
start) start_server ;;
stop) stop_server ;;
status) status ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
