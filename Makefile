# mcpdrift — build, test, lint, benchmark, fuzz.
GO       ?= go
BIN      := bin
# The repository's Go modules (CONTRIBUTING.md): the root module (Collector
# components, CLI, probe) and the agent-side modules, which must not pull the
# Collector. Each is built and tested on its own go.mod, as users and ocb see
# it: the go.work is for editors and ad-hoc commands, not for make or CI.
# dev/integration holds the agent-side modules' tests that need dev tooling,
# which no shipped module may require (dev/modcheck).
MODULES  := . contract semconv internal/mcpwire interceptor interceptor/gosdk interceptor/mcpgo proxy dev/integration
export GOWORK := off
# Every go command builds with -trimpath, the flag ocb, make dist and the
# release test cannot do without (reproducible binaries): a package's
# directory is part of its build-cache key otherwise, so go vet and go test
# compiled the whole Collector graph once and make distro compiled it again
# (365 s of a cold CI run). Tests find the repository from their working
# directory, not from runtime.Caller, whose paths -trimpath shortens.
export GOFLAGS := -trimpath $(GOFLAGS)
# in_modules runs $(1) in every module's directory and fails if any run fails.
in_modules = fail=0; for m in $(MODULES); do (cd $$m && $(1)) || fail=1; done; test $$fail = 0
# in_modules_at_once is in_modules with the modules side by side, for the
# download, tidy and vet steps, each a go command of its own. (make test runs
# the modules in turn: side by side, its tests with short budgets timed out
# under load, and on a quiet machine it was not faster.) Each module's output
# is held in a file and printed in MODULES order, once that module and those
# before it are done.
in_modules_at_once = out=$$(mktemp -d); i=0; for m in $(MODULES); do i=$$((i+1)); \
	(cd $$m && $(1)) >$$out/$$i 2>&1 & echo $$! >$$out/$$i.pid; done; \
	fail=0; i=0; for m in $(MODULES); do i=$$((i+1)); wait $$(cat $$out/$$i.pid) || fail=1; cat $$out/$$i; done; \
	rm -rf $$out; test $$fail = 0
FUZZTIME ?= 20s
# Go minimizes every new interesting input for up to -fuzzminimizetime (60s by
# default) before that worker fuzzes again: with 20s per target the workers
# spent the whole run minimizing their first finds. A short budget keeps them
# exploring; crashers are still minimized (within the same budget).
FUZZMINIMIZETIME ?= 1s
BENCHTIME ?= 1s
export CGO_ENABLED ?= 0
# RETRY runs a step that fetches from a registry again if it fails (scripts/retry.sh).
RETRY    := $(CURDIR)/scripts/retry.sh

.PHONY: all build download test lint bench fuzz distro distro-extras demo demo-bins jaeger e2e e2e-stale release dist dist-check image clean

# What a binary reports (mcpdrift version, otelcol-mcpdrift --version): the
# release tag at HEAD (none on the development branch: the CLI then says
# "(devel)") and the source commit (a release commit names the commit it was
# cut from; a checkout with uncommitted changes is "-dirty").
VERSION ?= $(shell git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null)
COMMIT ?= $(shell c=$$(cat internal/version/release_commit.txt 2>/dev/null); [ -n "$$c" ] && echo $$c || \
	echo $$(git rev-parse HEAD 2>/dev/null || echo unknown)$$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty))
VERSION_LDFLAGS = -X github.com/mcpdrift/mcpdrift/internal/version.version=$(VERSION) -X github.com/mcpdrift/mcpdrift/internal/version.commit=$(COMMIT)

all: build

# The binaries built here are for this checkout's tests and demos: built
# with the flags the tests build their packages with (GOFLAGS above), they
# reuse every package `go vet` and `go test` compiled.
## build: the mcpdrift CLI into bin/
build:
	$(GO) build -ldflags='$(VERSION_LDFLAGS)' -o $(BIN)/mcpdrift ./cmd/mcpdrift

## download: every module's dependencies, and the pinned Go tools
download:
	@$(call in_modules_at_once,$(RETRY) $(GO) mod download)
	$(RETRY) $(GO) -C tools mod download
	$(RETRY) $(GO) -C tools/helmtemplate mod download

## test: every test of every module. A test that needs a tool this machine lacks (node and npm,
## promtool, Prometheus, a built distribution) skips loudly, and the list of what was skipped is
## printed at the end; under CI (CI=true) such a test fails instead.
test:
	@$(call with_skips,$(call in_modules,$(GO) test -count=1 ./...))

# with_skips runs $(1) with a file for testservers.SkipLoudly to log skips in,
# then lists them: go test shows nothing of a package that passed.
with_skips = skips=$$(mktemp); export MCPDRIFT_SKIPS_FILE=$$skips; $(1); rc=$$?; \
	if [ -s $$skips ]; then echo; echo "SKIPPED for want of a tool (each is a check that did NOT run):"; sort -u $$skips | sed 's/^/  /'; \
	else echo "nothing skipped"; fi; rm -f $$skips; exit $$rc

## tools: staticcheck and deadcode, built from their pins in tools/go.mod
LINTBIN := _build/tools
$(LINTBIN)/staticcheck $(LINTBIN)/deadcode &: tools/go.mod tools/go.sum
	$(GO) -C tools build -o $(CURDIR)/$(LINTBIN)/ honnef.co/go/tools/cmd/staticcheck golang.org/x/tools/cmd/deadcode

# Every package of every module, for the whole-program checks (run in the
# workspace, so deadcode sees every module's callers and tests together).
ALLPKGS := ./... $(patsubst %,./%/...,$(filter-out .,$(MODULES)))

## lint: no tracked file over 1 MiB, gofmt, every go.mod tidy, go vet, staticcheck, deadcode -test (no function without a caller or a test)
# The checks run side by side (deadcode, the longest, type-checks the whole
# program from source by itself), each one's output printed together.
LINTS := lint-files lint-tidy lint-vet lint-staticcheck lint-deadcode
.PHONY: $(LINTS)
lint:
	@$(MAKE) --no-print-directory -j$(words $(LINTS)) --output-sync=target $(LINTS)

lint-files:
	@big=$$(git ls-files -z | xargs -0 -r stat -c '%s %n' 2>/dev/null | awk '$$1 > 1048576 {print "  " $$2 " (" $$1 " bytes)"}'); \
	if [ -n "$$big" ]; then echo "tracked files over 1 MiB (binaries and data belong outside git):"; echo "$$big"; exit 1; fi
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

# tools/helmtemplate, the Go tool of ours outside MODULES (the docs tests
# build it), is tidied and vetted with them.
lint-tidy:
	@$(call in_modules_at_once,$(GO) mod tidy -diff >/dev/null || { echo "go mod tidy needed in $$m"; exit 1; })
	@$(GO) -C tools/helmtemplate mod tidy -diff >/dev/null || { echo "go mod tidy needed in tools/helmtemplate"; exit 1; }

lint-vet:
	@$(call in_modules_at_once,$(GO) vet ./...)
	$(GO) -C tools/helmtemplate vet ./...
	@# make dist cross-compiles; the CLI is the binary most likely to grow a
	@# unix-only call (its proxy relays signals): it must build for windows.
	GOOS=windows $(GO) build -o /dev/null ./cmd/mcpdrift
	@# proctree's Windows half (the job object) and its tests, which CI
	@# cannot run (docs/deploy.md runs them under Wine), at least compile.
	GOOS=windows $(GO) -C internal/mcpwire vet ./proctree/

# After go vet: staticcheck compiles the same export data (go list -export),
# which side by side on a cold build cache would be compiled twice.
lint-staticcheck: lint-vet $(LINTBIN)/staticcheck
	GOWORK=$(CURDIR)/go.work $(LINTBIN)/staticcheck -tags e2e $(ALLPKGS)

lint-deadcode: $(LINTBIN)/deadcode
	@dead=$$(GOWORK=$(CURDIR)/go.work $(LINTBIN)/deadcode -test -tags e2e $(ALLPKGS)) || exit 1; \
	if [ -n "$$dead" ]; then echo "deadcode: unreachable from every main and test:"; echo "$$dead"; exit 1; fi

## bench: all benchmarks, with the ratios the README reports
bench:
	@$(call in_modules,$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...)

## fuzz: a short run of every fuzz target (FUZZTIME each, GOMAXPROCS workers)
fuzz:
	@set -e; for m in $(MODULES); do for pkg in $$($(GO) -C $$m list ./...); do \
	  for t in $$($(GO) -C $$m test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$t"; \
	    $(GO) -C $$m test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg; \
	  done; \
	done; done

## distro: the otelcol-mcpdrift collector distribution, with ocb (pinned in tools/)
# ocb writes the sources and go build compiles them with the flags of ocb's
# own compile step (-trimpath, no cgo), which go test (GOFLAGS above), make
# dist, make image and e2e/release's TestReleaseOffline (ocb building a user's
# manifest) use too: one build cache serves them all.
# ocb writes the manifest's dist.version into main.go, which --version prints:
# the build's copy of the manifest says which version and commit it is.
OTELCOL_VERSION = $(patsubst v%,%,$(or $(VERSION),v0.0.0-dev))+$(COMMIT)
ocb = sed 's|^  version: .*|  version: $(OTELCOL_VERSION)|' $(1) >_build/$(notdir $(1)) && \
	$(RETRY) $(GO) tool -modfile=tools/go.mod builder --config _build/$(notdir $(1)) --skip-compilation && \
	$(GO) -C $(dir $(2)) build -trimpath -ldflags='-s -w' -o $(notdir $(2)) .
# Rewritten only when the version or commit changes, so that a new commit
# rebuilds the distributions (relinks them) with the new stamp.
VERSION_STAMP := _build/version.stamp
# stamp writes $(1) into the target if it differs from what the file holds.
stamp = @mkdir -p $(dir $@); echo '$(1)' | cmp -s - $@ || echo '$(1)' >$@
$(VERSION_STAMP): FORCE
	$(call stamp,$(OTELCOL_VERSION))
.PHONY: FORCE
DISTRO := _build/otelcol-mcpdrift/otelcol-mcpdrift
SOURCES := go.mod $(MODULES:%=%/go.mod) $(shell find receiver processor extension contract probe semconv internal -name '*.go' -not -name '*_test.go' 2>/dev/null) $(shell find extension -path '*/dashboard/*' -type f 2>/dev/null) $(wildcard extension/*/openapi.json)
distro: $(DISTRO)
$(DISTRO): builder-config.yaml $(SOURCES) $(VERSION_STAMP)
	mkdir -p _build
	$(call ocb,builder-config.yaml,$(DISTRO))

## distro-extras: a second build with the loadbalancing and ClickHouse exporters, for the
## docs' scale-out and ClickHouse examples: make test validates them, make e2e runs scale-out
EXTRAS := _build/otelcol-mcpdrift-extras/otelcol-mcpdrift-extras
distro-extras: $(EXTRAS)
$(EXTRAS): docs/examples/builder-extras.yaml $(SOURCES) $(VERSION_STAMP)
	mkdir -p _build
	$(call ocb,docs/examples/builder-extras.yaml,$(EXTRAS))

## demo: the quickstart: a drifting MCP server, the collector and the demo agent (within 60 s);
## make demo DEMO_FLAGS=-dashboard keeps it running with the dashboard on http://127.0.0.1:13180/
demo: distro demo-bins
	$(BIN)/quickstart-demo $(DEMO_FLAGS)

demo-bins:
	$(GO) build -o $(BIN)/quickstart-server ./examples/quickstart/server
	$(GO) build -o $(BIN)/quickstart-demo ./dev/quickstart/demo
	$(GO) build -o $(BIN)/demo-agent ./examples/agent

## jaeger: Jaeger v2 all-in-one for the backends e2e (version pinned in tools/jaeger)
JAEGER := _build/jaeger
jaeger: $(JAEGER)
$(JAEGER): tools/jaeger/go.mod tools/jaeger/go.sum
	scripts/backends/build-jaeger.sh $(JAEGER)

## e2e: end-to-end tests against the built distributions, real npm servers and backends,
## and the scale-out throughput figures (spans/s, two tiers versus one instance)
# The image is built for this machine's architecture only: its binary is
# make distro's build-cache hits plus a link, where a second architecture
# would compile the whole Collector again (make image builds both).
# The e2e tests mostly wait on servers, hosts and probe intervals, each on
# ports and in directories of its own: they run E2E_PARALLEL at a time. The
# throughput benchmark runs after them, alone: go test runs packages one at
# a time when it benchmarks, so with -bench in the same command e2e/release
# waited for the whole e2e package.
E2E_PARALLEL ?= 4
e2e: build distro distro-extras demo-bins jaeger
	$(MAKE) image IMAGE_ARCHS=$$($(GO) env GOARCH)
	@$(call with_skips,$(GO) test -count=1 -tags e2e -run 'TestJaeger|TestBuiltImages' ./dev/backends/ ./dev/image/ && \
	  $(GO) test -count=1 -tags e2e -timeout 30m -parallel $(E2E_PARALLEL) ./e2e/... && \
	  $(GO) test -count=1 -tags e2e -run '^$$' -bench ScaleOutThroughput -benchtime 1x ./e2e/)

## release: cut release RELEASE (make release RELEASE=v0.1.0): every module tagged at it, from a
## scratch clone of HEAD (CONTRIBUTING.md "Releases"); the modules also land in _build/release/
release:
	@test -n "$(RELEASE)" || { echo "usage: make release RELEASE=vX.Y.Z"; exit 1; }
	scripts/release.sh $(RELEASE)

## dist: release binaries in dist/: the CLI and otelcol-mcpdrift for linux, darwin, windows x
## amd64, arm64 (DIST_PLATFORMS), an SBOM each, SHA256SUMS
dist:
	VERSION=$(or $(VERSION),v0.0.0-dev) COMMIT=$(COMMIT) scripts/dist.sh

## dist-check: make dist twice, here and from a clone of HEAD at another path with an empty build
## cache, and compare SHA256SUMS (a clean working tree; DIST_PLATFORMS narrows it)
dist-check:
	VERSION=$(or $(VERSION),v0.0.0-dev) COMMIT=$(COMMIT) scripts/dist-check.sh

## image: OCI image layouts (linux/amd64 + arm64, IMAGE_ARCHS, built without a daemon) of
## otelcol-mcpdrift and the CLI into _build/image/
IMAGE_ARCHS ?= amd64 arm64
# Built again only when an input changed: every tracked file but tests and
# docs (the binaries' sources, the scripts, the image's configuration), the
# version stamp, or IMAGE_ARCHS. So .ci/run can build it beside make test and
# make e2e finds it made.
IMAGE_INPUTS := $(wildcard $(shell git ls-files -- ':!:*_test.go' ':!:*.md' ':!:*/testdata/*' ':!:testdata/*' 2>/dev/null))
IMAGE_STAMP := _build/image.stamp
IMAGE_ARCHS_STAMP := _build/image-archs.stamp
image: $(IMAGE_STAMP)
$(IMAGE_ARCHS_STAMP): FORCE
	$(call stamp,$(IMAGE_ARCHS))
$(IMAGE_STAMP): $(IMAGE_INPUTS) $(VERSION_STAMP) $(IMAGE_ARCHS_STAMP)
	VERSION=$(or $(VERSION),v0.0.0-dev) COMMIT=$(COMMIT) IMAGE_ARCHS='$(IMAGE_ARCHS)' scripts/image.sh
	touch $@

## e2e-stale: only issue 23's stale-call judgements end to end (make e2e runs them too), with the
## real Claude Code CLI (pinned in testdata/npm) driven by a scripted stand-in for the Messages
## API, and with a Go agent's guard: under a minute once built
e2e-stale: build distro demo-bins
	@$(call with_skips,$(GO) test -count=1 -tags e2e -timeout 10m -run 'TestClaudeCodeStaleCalls|TestGoAgentStaleCalls' -v ./e2e/)

clean:
	rm -rf $(BIN) _build dist
