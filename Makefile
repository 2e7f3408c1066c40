# The edge waiting room: build, test and run.
#
#   make build   bin/main.wasm (TinyGo when installed, else Go; TOOLCHAIN=go|tinygo forces one)
#   make test    every test: edge module (twice: this Go and Go 1.23), tools module, the wasm build
#   make serve   the waiting room locally (see README.md)
#   make bench   the benchmark: writes BENCHMARKS.md and docs/flashcrowd.svg (make bench-large: 1,000,000 visitors)

SHELL := /bin/bash
TOOLCHAIN ?= $(if $(shell command -v tinygo 2>/dev/null),tinygo,go)
# The oldest Go the SDK supports, and the standard library TinyGo 0.33 compiles
# against: building with it turns any newer API into a compile error.
GO_MIN := go1.23.12
EDGE_SOURCES := $(shell find . -path ./tools -prune -o \( -name '*.go' -o -name '*.lua' -o -name '*.html' \) -print) go.mod go.sum

.PHONY: build test test-edge test-edge-min test-tools vet serve bench bench-large bench-host clean

build: bin/main.wasm

bin/main.wasm: $(EDGE_SOURCES)
	@mkdir -p bin
ifeq ($(TOOLCHAIN),tinygo)
	# purego: jwt/v5 links crypto/rsa, whose assembly TinyGo cannot build.
	tinygo build -target=wasip1 -no-debug -tags=purego -o bin/main.wasm .
else ifeq ($(TOOLCHAIN),go)
	GOOS=wasip1 GOARCH=wasm go build -trimpath -o bin/main.wasm .
else
	$(error TOOLCHAIN must be go or tinygo, not $(TOOLCHAIN))
endif
	@ls -l bin/main.wasm

test: build test-edge test-edge-min test-tools

vet:
	gofmt -l . | (! grep .) || (echo "gofmt would change the files above" && exit 1)
	go vet ./...
	GOOS=wasip1 GOARCH=wasm go vet ./...
	cd tools && go vet ./...

test-edge: vet
	go test -count=1 ./...
	# The hot-path benchmarks check their results: run each once.
	go test -run '^$$' -bench . -benchtime 1x ./queue ./templates ./edge

test-edge-min:
	GOTOOLCHAIN=$(GO_MIN) go vet ./...
	GOTOOLCHAIN=$(GO_MIN) GOOS=wasip1 GOARCH=wasm go build -o /dev/null .
	GOTOOLCHAIN=$(GO_MIN) go test -count=1 ./...

tools/compat/node_modules: tools/compat/package.json tools/compat/package-lock.json
	cd tools/compat && npm ci --no-audit --no-fund
	@touch tools/compat/node_modules

tools/fastlycli/node_modules: tools/fastlycli/package.json tools/fastlycli/package-lock.json
	cd tools/fastlycli && npm ci --no-audit --no-fund
	@touch tools/fastlycli/node_modules

test-tools: build tools/compat/node_modules tools/fastlycli/node_modules
	cd tools && WASM=$(CURDIR)/bin/main.wasm go test -count=1 -timeout 20m ./...

# The benchmark (see BENCHMARKS.md): hot paths, the simulated flash crowd
# against models of two other designs, and the real wasm under load. The
# build runs inside the recipe so that the reported time covers it.
BENCH_FLAGS ?=
BENCH_OUT ?= BENCHMARKS.md
BENCH_PLOT ?= docs/flashcrowd.svg
BENCH_COMMAND ?= make bench
bench:
	@mkdir -p bin/bench && date +%s > bin/bench/started
	$(MAKE) build
	go test -run '^$$' -bench . -benchmem ./queue ./templates ./edge | tee bin/bench/hotpaths.txt
	cd tools && go run ./cmd/bench -started $$(cat ../bin/bench/started) -hotpaths ../bin/bench/hotpaths.txt \
		-wasm ../bin/main.wasm -manifest ../fastly.toml -out ../$(BENCH_OUT) -plot ../$(BENCH_PLOT) \
		-command "$(BENCH_COMMAND)" $(BENCH_FLAGS)

bench-large:
	$(MAKE) bench BENCH_COMMAND="make bench-large" BENCH_FLAGS=-large BENCH_OUT=BENCHMARKS-large.md BENCH_PLOT=docs/flashcrowd-large.svg

# Per-request time of the real wasm in the local host (p50/p99 over 1,000 requests each).
bench-host: build
	cd tools && WASM=$(CURDIR)/bin/main.wasm go test -run '^$$' -bench . -benchtime 1000x ./e2e

serve: build
	cd tools && go build -o ../bin/serve ./cmd/serve
	exec bin/serve -C fastly.toml -wasm bin/main.wasm

clean:
	rm -rf bin pkg tools/compat/node_modules tools/fastlycli/node_modules
