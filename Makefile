# The edge waiting room: build, test and run.
#
#   make build   bin/main.wasm (TinyGo when a usable one is installed, else Go; TOOLCHAIN=go|tinygo forces one)
#   make prereqs what the tests need (tools/prereqs): installs it where it can, else says in one line what is missing
#   make test    make prereqs, then every test: edge module (this Go, Go 1.23, TinyGo), tools module, end to end on both wasm builds
#   make fuzz    every Fuzz target of the edge module, FUZZTIME (20s) each (CI runs it after make test)
#   make model   the model-based tests of the store script, sharded rooms, the door and the join limit, MODELCHECKS (2000) sequences (CI too)
#   make serve   the waiting room locally (see README.md)
#   make panel-screenshot  docs/admin-panel.png and docs/admin-panel-phone.png: the admin panel in headless Chromium (tools/suites/paneltest)
#   make page-screenshots  docs/queue-*.png: the queue page in headless Chromium (tools/suites/pagetest)
#   make docs  docs/configuration.md, from the settings table (settings/settings.go)
#   make bin/wrconfig  the config checker: bin/wrconfig check devconfig.json; bin/wrconfig explain HOST PATH [flags]
#   make conformance  the Fastly Go SDK's own test suites against the local host; rewrites tools/fastlyhost/README.md's table
#   make bench   the benchmark: BENCHMARKS.md and docs/flashcrowd.svg. Each section of BENCHMARKS.md is written
#                by one target, which leaves the others as they are (tools/benchreport/sections.go); make bench
#                writes the flash crowd, end to end and hot paths, then runs bench-floods (the bot floods), bench-bots,
#                bench-fairness (the line's and the draw's), bench-heartbeat (utilisation) and bench-pops
#                (waiting's cost with a snapshot per POP, 100,000 visitors) and bench-script (the Redis CPU of a
#                call of the store's script, against SCRIPT_BASELINE's). Apart: bench-pops-large (the same at
#                1,000,000), bench-shards (one room as 1 to 8 shards), bench-work (the proof of work's search
#                in Chromium against a bot's), bench-bots (distributed bots against the limits per network,
#                the proof of work and the decoy line), bench-host (fresh against reused
#                sandboxes, and each request against its floor), figures (module sizes, CLI version);
#                make bench-large: make bench's own sections at 1,000,000 visitors, in BENCHMARKS-large.md.

SHELL := /bin/bash
TOOLCHAIN ?= auto
# The oldest Go the SDK supports, and the standard library TinyGo 0.33 compiles
# against: building with it turns any newer API into a compile error.
GO_MIN := go1.23.12
EDGE_SOURCES := $(shell find . -path ./tools -prune -o \( -name '*.go' -o -name '*.lua' -o -name '*.html' -o -name '*.js' -o -name '*.css' \) -print) go.mod go.sum api/openapi.json
# TinyGo's tests run as wasip1 modules under the wazero CLI (its wasip1-wazero target);
# bin/wazero is built at the version the tools module pins.
WAZERO := $(CURDIR)/bin/wazero
TINYGO_TEST := PATH="$(CURDIR)/bin:$$PATH" tools/build-wasm run-tinygo test -target=wasip1-wazero -tags=nofastlyhostcalls
# Set in CI: a machine that should have TinyGo fails instead of skipping its leg.
REQUIRE_TINYGO ?=
# TinyGo as make prereqs installed it from ../shared/toolchains, when it is not on PATH.
PREREQS_TINYGO := $(shell cat bin/prereqs/tinygo-dir 2>/dev/null)
ifneq ($(PREREQS_TINYGO),)
export PATH := $(PREREQS_TINYGO):$(PATH)
endif

.PHONY: docs build test test-all test-edge test-edge-min test-tools test-tinygo test-tinygo-run test-conformance conformance vet fuzz model serve bench bench-large bench-floods bench-bots bench-fairness bench-heartbeat bench-pops bench-pops-large bench-script bench-shards bench-work bench-host figures prereqs panel-screenshot page-screenshots clean

build: bin/main.wasm

# The configuration reference is written from the one table of settings; a
# test (settings/gendoc) fails while the committed file differs.
docs:
	go generate ./settings

bin/main.wasm: $(EDGE_SOURCES) tools/build-wasm
	tools/build-wasm $(TOOLCHAIN) $@

# The two builds every suite runs against.
bin/main.go.wasm: $(EDGE_SOURCES) tools/build-wasm
	tools/build-wasm go $@

bin/main.tinygo.wasm: $(EDGE_SOURCES) tools/build-wasm tools/tinygo-wasip1.json
	tools/build-wasm tinygo $@

$(WAZERO): tools/go.mod
	cd tools && go build -o $(WAZERO) github.com/tetratelabs/wazero/cmd/wazero

# make test runs make prereqs first, then every leg in a make that reads
# what it installed (TinyGo's directory on PATH).
test: prereqs
	@$(MAKE) --no-print-directory test-all

test-all: build test-edge test-edge-min test-tools test-tinygo test-conformance

prereqs:
	tools/prereqs

vet:
	gofmt -l . | (! grep .) || (echo "gofmt would change the files above" && exit 1)
	go vet ./...
	GOOS=wasip1 GOARCH=wasm go vet ./...
	GOOS=wasip1 GOARCH=wasm go vet -tags=fastlyinternalsetparseuri ./...
	cd tools && go vet ./...

test-edge: vet
	go test -count=1 ./...
	# The hot-path benchmarks check their results: run each once.
	go test -run '^$$' -bench . -benchtime 1x ./match ./queue ./templates ./edge

test-edge-min:
	GOTOOLCHAIN=$(GO_MIN) go vet ./...
	GOTOOLCHAIN=$(GO_MIN) GOOS=wasip1 GOARCH=wasm go build -tags=fastlyinternalsetparseuri -o /dev/null .
	GOTOOLCHAIN=$(GO_MIN) go test -count=1 ./...

# Fuzzing: make test runs each Fuzz target's seeds and committed corpus
# once; this fuzzes every target of the edge module, found by go test -list,
# for FUZZTIME each, one after another, and fails if any target fails
# (tools/fuzz-all; the failing input is left in testdata/fuzz/<Target>/).
FUZZTIME ?= 20s
fuzz:
	FUZZTIME=$(FUZZTIME) tools/fuzz-all

# The model-based test of the store script (tools/suites/modeltest: one line,
# a sharded room, the door through the gate) and of the doors into a place
# (TestNoDoorPassesTheJoinLimit), for MODELCHECKS random sequences each:
# make test runs rapid's 100; CI runs this after make fuzz.
MODELCHECKS ?= 2000
model:
	cd tools && go test -count=1 -timeout 30m -run 'TestModel$$' ./suites/modeltest -rapid.checks=$(MODELCHECKS)
	cd tools && go test -count=1 -timeout 30m -run 'TestShardedModel$$|TestDoor$$' ./suites/modeltest -rapid.checks=$(MODELCHECKS)
	cd tools && go test -count=1 -timeout 30m -run 'TestNoDoorPassesTheJoinLimit$$' ./suites/integration -rapid.checks=$(MODELCHECKS)

tools/suites/compat/node_modules: tools/suites/compat/package.json tools/suites/compat/package-lock.json
	cd tools/suites/compat && npm ci --no-audit --no-fund
	@touch tools/suites/compat/node_modules

tools/fastlycli/node_modules: tools/fastlycli/package.json tools/fastlycli/package-lock.json
	cd tools/fastlycli && npm ci --no-audit --no-fund
	@touch tools/fastlycli/node_modules

# axe-core, the accessibility checker tools/suites/pagetest runs in Chromium.
tools/suites/pagetest/node_modules: tools/suites/pagetest/package.json tools/suites/pagetest/package-lock.json
	cd tools/suites/pagetest && npm ci --no-audit --no-fund
	@touch tools/suites/pagetest/node_modules

test-tools: bin/main.go.wasm tools/suites/compat/node_modules tools/fastlycli/node_modules tools/suites/pagetest/node_modules
	cd tools && WASM=$(CURDIR)/bin/main.go.wasm go test -count=1 -timeout 30m ./...

# The TinyGo leg: the edge module's tests compiled by TinyGo, and every suite
# that runs the wasm (end to end, load, the local host's) against the TinyGo
# build. Skipped, with a line saying so, where no usable TinyGo is installed.
test-tinygo:
	@if why=$$(tools/build-wasm check-tinygo 2>&1); then $(MAKE) --no-print-directory test-tinygo-run; \
	elif [ -n "$(REQUIRE_TINYGO)" ]; then echo "FAIL: TinyGo is required here: $$why"; exit 1; \
	else echo "SKIPPED the TinyGo leg (the build most users ship is not tested on this machine): $$why." \
		"Install TinyGo >= 0.33.0 (here: ../shared/toolchains/install-tinygo) and run make test again."; fi

test-tinygo-run: bin/main.tinygo.wasm $(WAZERO) tools/fastlycli/node_modules tools/suites/pagetest/node_modules
	$(TINYGO_TEST) ./...
	cd tools && WASM=$(CURDIR)/bin/main.tinygo.wasm go test -count=1 -timeout 30m ./suites/e2e ./load ./fastlyhost ./devstack ./suites/attack ./suites/rules ./suites/paneltest ./suites/pagetest ./suites/apitest ./suites/logs ./suites/contract

# The Fastly Go SDK's own test suites (its integration_tests, end_to_end_tests and
# the packages with a fastly.toml, from the module cache) against the local host, as
# the SDK's Makefile runs them against Viceroy, under Go and TinyGo (tools/conformance).
# make conformance rewrites tools/fastlyhost/README.md's table from the results; make test fails when
# a result differs from tools/conformance/expected.go. The TinyGo runs are skipped
# where no usable TinyGo is installed (unless REQUIRE_TINYGO is set).
# (= not :=: TinyGo is looked for when a recipe runs, not on every make. PATH is
# passed by hand: make exports it to recipes, not to $(shell), so prereqs' TinyGo
# was not seen here and the TinyGo runs were skipped.)
CONFORMANCE_TINYGO = $(shell PATH="$(PATH)" tools/build-wasm check-tinygo 2>/dev/null && echo -tinygo \"$(CURDIR)/tools/build-wasm run-tinygo\")
CONFORMANCE = cd tools && go build -o $(CURDIR)/bin/fastlyhost ./cmd/fastlyhost && \
	go run ./cmd/conformance -module $(CURDIR) -host $(CURDIR)/bin/fastlyhost -log $(CURDIR)/bin/conformance.log $(CONFORMANCE_TINYGO)

conformance:
	@mkdir -p bin
	$(CONFORMANCE) -readme $(CURDIR)/tools/fastlyhost/README.md

test-conformance:
	@mkdir -p bin
	@if ! why=$$(tools/build-wasm check-tinygo 2>&1) && [ -n "$(REQUIRE_TINYGO)" ]; then echo "FAIL: TinyGo is required here: $$why"; exit 1; fi
	$(CONFORMANCE) -check

# The benchmark (see BENCHMARKS.md): hot paths (native, and compiled to wasm
# by Go and by TinyGo), the simulated flash crowd against models of two other
# designs, and each wasm build under load. The builds run inside the recipe so
# that the reported time covers them. Without a usable TinyGo the report says so.
BENCH_FLAGS ?=
BENCH_OUT ?= BENCHMARKS.md
BENCH_PLOT ?= docs/flashcrowd.svg
BENCH_COMMAND ?= make bench
HOT_PACKAGES := ./match ./queue ./templates ./edge
bench:
	@mkdir -p bin/bench && date +%s > bin/bench/started
	$(MAKE) bin/main.go.wasm $(WAZERO)
	go test -run '^$$' -bench . -benchmem $(HOT_PACKAGES) | tee bin/bench/hotpaths.txt
	PATH="$(CURDIR)/bin:$$PATH" GOOS=wasip1 GOARCH=wasm GOWASIRUNTIME=wazero go test -tags nofastlyhostcalls \
		-exec "$$(go env GOROOT)/lib/wasm/go_wasip1_wasm_exec" -run '^$$' -bench . -benchmem $(HOT_PACKAGES) | tee bin/bench/hotpaths-go-wasm.txt
	@rm -f bin/bench/tinygo-flags bin/bench/missing
	@if why=$$(tools/build-wasm check-tinygo 2>&1); then \
		$(MAKE) bin/main.tinygo.wasm && \
		$(TINYGO_TEST) -run '^$$' -bench . -benchmem $(HOT_PACKAGES) | tee bin/bench/hotpaths-tinygo.txt && \
		echo "-tinygo-wasm ../bin/main.tinygo.wasm -tinygo-hotpaths ../bin/bench/hotpaths-tinygo.txt -tinygo-version $$(tools/build-wasm run-tinygo version | sed -n 's/^tinygo version \([^ ]*\).*/\1/p')" > bin/bench/tinygo-flags; \
	else echo "bench: $$why: the TinyGo build is not measured"; echo "TinyGo ($$why)" > bin/bench/missing; fi
	cd tools && go run ./cmd/bench -started $$(cat ../bin/bench/started) -hotpaths ../bin/bench/hotpaths.txt \
		-wasm ../bin/main.go.wasm -hotpaths-wasm ../bin/bench/hotpaths-go-wasm.txt $$(cat ../bin/bench/tinygo-flags 2>/dev/null) \
		-missing "$$(cat ../bin/bench/missing 2>/dev/null)" \
		-manifest ../fastly.toml -out ../$(BENCH_OUT) -plot ../$(BENCH_PLOT) -command "$(BENCH_COMMAND)" $(BENCH_FLAGS)
	$(if $(filter -large,$(BENCH_FLAGS)),,$(MAKE) --no-print-directory bench-floods bench-bots bench-fairness bench-heartbeat bench-pops bench-script)

bench-large:
	$(MAKE) bench BENCH_COMMAND="make bench-large" BENCH_FLAGS=-large BENCH_OUT=BENCHMARKS-large.md BENCH_PLOT=docs/flashcrowd-large.svg

# Only the bot floods of BENCHMARKS.md (the simulator, with the edge before and
# after the armour of issue 10): played again and their section rewritten in place.
bench-floods:
	cd tools && go run ./cmd/bench -floods-only -out ../$(BENCH_OUT) -command "make bench-floods"

# Only the distributed bots' section of BENCHMARKS.md (issue 26): 1,000 and 10,000 bot
# joins a second from 1,000 and 10,000 addresses in 10 and 100 AS beside 30,000 visitors,
# against the join limit per address, then the limits per network and AS, the proof of
# work and the decoy line, each a 20-minute event in virtual time on the real gate and
# script, played at 1/BOT_SCALE (the crowd, the rate, and the botnet by whole AS). A few
# minutes at 1/10 on 2 cores; BOT_SCALE=1 plays the full event (hours).
BOT_SCALE ?= 10
bench-bots:
	cd tools && go run ./cmd/bench -bots-only -bot-scale $(BOT_SCALE) -out ../$(BENCH_OUT) \
		-command "make bench-bots$(if $(filter-out 10,$(BOT_SCALE)), BOT_SCALE=$(BOT_SCALE))"

# Only the fairness section of BENCHMARKS.md (issue 11: the Kendall tau distance
# between arrival and admission order in each calling order, and the chi-square
# test of a scheduled event's draw): measured again and rewritten in place.
bench-fairness:
	cd tools && go run ./cmd/bench -fairness-only -out ../$(BENCH_OUT) -command "make bench-fairness"

# Only the heartbeat's section of BENCHMARKS.md (issue 13: utilisation and store
# calls with today's inactivity timeout and with short ones kept by the heartbeat
# script): played again and rewritten in place.
bench-heartbeat:
	cd tools && go run ./cmd/bench -heartbeat-only -out ../$(BENCH_OUT) -command "make bench-heartbeat"

# Only the POPs' snapshot's section of BENCHMARKS.md (issue 14: store calls per
# visitor-minute waiting, per admitted visitor and at the peak, today's edge against
# the snapshot over 1, 10 and 50 POPs and the two models): played again and
# rewritten in place. make bench writes the 100,000-visitor section and keeps the
# 1,000,000-visitor one, which only bench-pops-large plays (bench-pops took 11 minutes
# on 2 cores; at ten times the visitors each run takes several times as long).
bench-pops:
	cd tools && go run ./cmd/bench -pops-only -out ../$(BENCH_OUT) -command "make bench-pops"

bench-pops-large:
	cd tools && go run ./cmd/bench -pops-only -large -out ../$(BENCH_OUT) -command "make bench-pops-large"

# Only the store script's section of BENCHMARKS.md (issue 25): the Redis CPU of
# each call (INFO cpu, INFO commandstats) on one room whose line has SCRIPT_WAITING
# tickets waiting, and one core's calls/s with 32 clients polling, of this tree's
# store/line.lua and of SCRIPT_BASELINE's. tools/cmd/scriptbench is built twice:
# against this tree, and against the baseline's root module (git archive, and a
# copy of tools/go.mod whose replace points there); cmd/bench runs both side by
# side, taking turns round by round, their redis-servers pinned to one CPU, so the
# ratios compare like with like (the rounds are kept in bin/bench/script-results.json).
SCRIPT_BASELINE ?= 39117c1
SCRIPT_WAITING ?= 1000 100000 1000000
SCRIPT_BASELINE_DIR = $(CURDIR)/bin/baseline-$(SCRIPT_BASELINE)
bench-script:
	@mkdir -p bin/bench && date +%s > bin/bench/script-started
	rm -rf $(SCRIPT_BASELINE_DIR) && mkdir -p $(SCRIPT_BASELINE_DIR)
	git archive $(SCRIPT_BASELINE) -- ':(exclude)tools' | tar -x -C $(SCRIPT_BASELINE_DIR)
	cp tools/go.mod bin/bench/scriptbench-baseline.mod && cp tools/go.sum bin/bench/scriptbench-baseline.sum
	cd tools && go mod edit -modfile ../bin/bench/scriptbench-baseline.mod -replace github.com/edgequeue/waitingroom=$(SCRIPT_BASELINE_DIR)
	cd tools && go build -o ../bin/bench/scriptbench-today ./cmd/scriptbench
	cd tools && go build -modfile ../bin/bench/scriptbench-baseline.mod -o ../bin/bench/scriptbench-baseline ./cmd/scriptbench
	cd tools && go run ./cmd/bench -script-only -started $$(cat ../bin/bench/script-started) \
		-script-today ../bin/bench/scriptbench-today -script-baseline ../bin/bench/scriptbench-baseline -script-waiting "$(SCRIPT_WAITING)" \
		-script-json ../bin/bench/script-results.json -script-baseline-dir $(SCRIPT_BASELINE_DIR) \
		-script-commit "$$(git describe --always --dirty)" -script-baseline-commit "$$(git rev-parse --short $(SCRIPT_BASELINE)^{commit})" \
		-out ../$(BENCH_OUT) -command "make bench-script"

# The sharded rooms' section of BENCHMARKS.md (issue 25): the flash crowd at
# SHARD_VISITORS in a room of 1, 2, 4 and 8 shards, every shard on one redis-server
# as a hash slot of its own, under today's edge and the snapshot over one POP
# (SHARD_POPS): each shard's peak calls a second against one core's ceiling (the
# script's section's, make bench-script), overshoot, arrival order within and across
# shards, and the 1,000,000 and 10,000,000-visitor crowds on paper from the per-shard
# figures. The runs are kept in SHARD_KEEP. At 100,000 visitors its eight
# runs take most of an hour on 2 cores; SHARD_VISITORS=1000000 plays the issue's crowd
# (about ten times as long).
SHARD_VISITORS ?= 100000
SHARD_POPS ?= 0,1
SHARD_KEEP ?= bin/bench/shards.json
comma := ,
bench-shards:
	@mkdir -p bin/bench
	cd tools && go run ./cmd/bench -shards-only -visitors $(SHARD_VISITORS) -shard-pops $(SHARD_POPS) -shards-keep ../$(SHARD_KEEP) \
		-out ../$(BENCH_OUT) -command "make bench-shards$(if $(filter-out 100000,$(SHARD_VISITORS)), SHARD_VISITORS=$(SHARD_VISITORS))$(if $(filter-out 0$(comma)1,$(SHARD_POPS)), SHARD_POPS=$(SHARD_POPS))"

# The proof of work's section of BENCHMARKS.md (issue 26): the work page's search in
# headless Chromium at each rung from 14 to 20 bits, WORK_SEARCHES times each, in its
# worker on this machine's CPU and on the page's thread throttled 4× (a mid-range
# phone), against a bot's native hash rate on one core. A few minutes.
WORK_SEARCHES ?= 15
bench-work: tools/suites/pagetest/node_modules
	@mkdir -p bin/bench && date +%s > bin/bench/work-started
	cd tools && REQUIRE_CHROMIUM=1 WORK_TIMES=$(CURDIR)/bin/bench/work-times.json WORK_SEARCHES=$(WORK_SEARCHES) \
		go test -count=1 -run '^TestWorkSearchTimes$$' -timeout 60m ./suites/pagetest
	cd tools && go run ./cmd/bench -work-only -started $$(cat ../bin/bench/work-started) -work-times ../bin/bench/work-times.json \
		-out ../$(BENCH_OUT) -command "make bench-work$(if $(filter-out 15,$(WORK_SEARCHES)), WORK_SEARCHES=$(WORK_SEARCHES))"

# The floors of bench-host (floor/): bare guests built as the service is, by
# tools/build-wasm with each compiler, target and flags.
FLOOR_SOURCES := $(wildcard floor/*.go floor/*/*.go) go.mod go.sum tools/build-wasm
bin/floor-%.go.wasm: $(FLOOR_SOURCES)
	tools/build-wasm go $@ ./floor/$*

bin/floor-%.tinygo.wasm: $(FLOOR_SOURCES) tools/tinygo-wasip1.json
	tools/build-wasm tinygo $@ ./floor/$*

# The reusable sandboxes' and the floor's sections of BENCHMARKS.md: one request
# at a time through the local host, fresh sandboxes against reused ones
# (tools/suites/e2e's benchmarks, HOST_REQUESTS each): the service's queue page
# (a newcomer's, a poll the store answers, a poll the POP's snapshot answers) and
# admitted request, and their floors, the bare guests of floor/; then the parts of
# a request (settings, the pass, the page, the log line: the hot-path benchmarks
# of HOST_PARTS) compiled to wasm by the same compiler. Against the Go build and,
# where a usable TinyGo is installed, the TinyGo build.
HOST_REQUESTS ?= 300
# Each request benchmark runs HOST_COUNT times, each part five: the report keeps
# the least costly run, the one others on a shared machine disturbed least.
HOST_COUNT ?= 2
# The -bench pattern is the one the report names (tools/benchreport's HostBenchPattern).
HOST_BENCH = go test -run '^$$' -bench 'QueuePage|Arrival|SnapshotPoll|Forwarded|Floor' -benchtime $(HOST_REQUESTS)x -count $(HOST_COUNT) -timeout 60m ./suites/e2e
HOST_GUESTS = WASM=$(CURDIR)/bin/main.$(1).wasm FLOOR_FORWARD_WASM=$(CURDIR)/bin/floor-forward.$(1).wasm FLOOR_PAGE_WASM=$(CURDIR)/bin/floor-page.$(1).wasm
HOST_PARTS = -run '^$$' -benchmem -count 5 -bench 'LoadSettings|Verify|QueuePage|LogLine' ./edge ./queue
bench-host: bin/main.go.wasm bin/floor-forward.go.wasm bin/floor-page.go.wasm $(WAZERO)
	@mkdir -p bin/bench && date +%s > bin/bench/host-started
	@rm -f bin/bench/host-tinygo-flags bin/bench/host-missing
	cd tools && $(call HOST_GUESTS,go) $(HOST_BENCH) | tee ../bin/bench/host-go.txt
	PATH="$(CURDIR)/bin:$$PATH" GOOS=wasip1 GOARCH=wasm GOWASIRUNTIME=wazero go test -tags nofastlyhostcalls \
		-exec "$$(go env GOROOT)/lib/wasm/go_wasip1_wasm_exec" $(HOST_PARTS) | tee bin/bench/host-parts-go.txt
	@if why=$$(tools/build-wasm check-tinygo 2>&1); then \
		$(MAKE) bin/main.tinygo.wasm bin/floor-forward.tinygo.wasm bin/floor-page.tinygo.wasm && \
		(cd tools && $(call HOST_GUESTS,tinygo) $(HOST_BENCH)) | tee bin/bench/host-tinygo.txt && \
		$(TINYGO_TEST) $(HOST_PARTS) | tee bin/bench/host-parts-tinygo.txt && \
		echo "-tinygo-host ../bin/bench/host-tinygo.txt -tinygo-parts ../bin/bench/host-parts-tinygo.txt -tinygo-version $$(tools/build-wasm run-tinygo version | sed -n 's/^tinygo version \([^ ]*\).*/\1/p')" > bin/bench/host-tinygo-flags; \
	else echo "bench-host: $$why: the TinyGo build is not measured"; echo "TinyGo ($$why)" > bin/bench/host-missing; fi
	cd tools && go run ./cmd/bench -host-only -started $$(cat ../bin/bench/host-started) -host ../bin/bench/host-go.txt -parts ../bin/bench/host-parts-go.txt $$(cat ../bin/bench/host-tinygo-flags 2>/dev/null) \
		-host-requests $(HOST_REQUESTS) -host-count $(HOST_COUNT) -missing "$$(cat ../bin/bench/host-missing 2>/dev/null)" -out ../$(BENCH_OUT) -command "make bench-host"

# The figures the docs quote (BENCHMARKS.md, "Figures the docs quote"): the size of
# each build's module and the Fastly CLI version tools/fastlycli installs. TinyGo's
# module is required: it is the one most users ship. (tools/benchreport's test
# compares the section with package.json, and with the modules when they are built.)
figures: bin/main.go.wasm bin/main.tinygo.wasm
	cd tools && go run ./cmd/bench -figures-only -wasm ../bin/main.go.wasm -tinygo-wasm ../bin/main.tinygo.wasm \
		-tinygo-version $$(../tools/build-wasm run-tinygo version | sed -n 's/^tinygo version \([^ ]*\).*/\1/p') \
		-cli-package fastlycli/package.json -out ../$(BENCH_OUT) -command "make figures"

# The admin panel's screenshots in docs/operations.md: tools/suites/paneltest in
# headless Chromium against the Go build, writing docs/admin-panel.png and, at a
# phone's width, docs/admin-panel-phone.png.
panel-screenshot: bin/main.go.wasm
	cd tools && WASM=$(CURDIR)/bin/main.go.wasm PANEL_SCREENSHOT=$(CURDIR)/docs/admin-panel.png REQUIRE_CHROMIUM=1 \
		go test -count=1 -run TestPanelInChromium ./suites/paneltest

# The queue page's screenshots in docs/visitors.md: tools/suites/pagetest in headless
# Chromium against the Go build, writing docs/queue-{en,de}-{desktop,phone}.png.
page-screenshots: bin/main.go.wasm tools/suites/pagetest/node_modules
	cd tools && WASM=$(CURDIR)/bin/main.go.wasm SCREENSHOTS=$(CURDIR)/docs REQUIRE_CHROMIUM=1 \
		go test -count=1 -run TestQueuePage ./suites/pagetest

# wrconfig checks a config and explains where a request goes (docs/rooms.md, "Checking a config").
bin/wrconfig: $(EDGE_SOURCES) $(wildcard tools/cmd/wrconfig/*.go) tools/go.mod
	cd tools && go build -o ../bin/wrconfig ./cmd/wrconfig

# POPS=2 runs two hosts, two POPs with their own caches, on 7676 and 7677.
POPS ?= 1
# The first make serve compiles the tools module (wazero among it) and the
# wasm, minutes on 2 cores: each step says what it does, go build -v names
# each package as it compiles it, and later runs reuse both.
serve: build
	@echo "serve: building the local host, bin/serve (the first time a few minutes: go build -v lists each package it compiles; later runs take seconds)"
	cd tools && go build -v -o ../bin/serve ./cmd/serve
	exec bin/serve -C fastly.toml -wasm bin/main.wasm -pops $(POPS)

clean:
	rm -rf bin pkg tools/suites/compat/node_modules tools/fastlycli/node_modules tools/suites/pagetest/node_modules
