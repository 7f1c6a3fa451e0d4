# mcpdrift — build, test, lint, benchmark, fuzz.
GO       ?= go
BIN      := bin
PKGS     := ./...
FUZZTIME ?= 20s
# Go minimizes every new interesting input for up to -fuzzminimizetime (60s by
# default) before that worker fuzzes again: with 20s per target the workers
# spent the whole run minimizing their first finds. A short budget keeps them
# exploring; crashers are still minimized (within the same budget).
FUZZMINIMIZETIME ?= 1s
BENCHTIME ?= 1s
export CGO_ENABLED ?= 0

.PHONY: all build test lint bench fuzz distro distro-extras demo demo-bins jaeger e2e clean

all: build

## build: the mcpdrift CLI into bin/
build:
	$(GO) build -trimpath -o $(BIN)/mcpdrift ./cmd/mcpdrift

## test: every test in the module (tests that need npm servers skip loudly without npm)
test:
	$(GO) test -count=1 $(PKGS)

## lint: gofmt check and go vet
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: all benchmarks, with the ratios the README reports
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

## fuzz: a short run of every fuzz target (FUZZTIME each, GOMAXPROCS workers)
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg; \
	  done; \
	done

## distro: the otelcol-mcpdrift collector distribution, with ocb (pinned in tools/)
DISTRO := _build/otelcol-mcpdrift/otelcol-mcpdrift
SOURCES := go.mod $(shell find receiver processor extension contract probe semconv internal -name '*.go' -not -name '*_test.go' 2>/dev/null) $(shell find extension -path '*/dashboard/*' -type f 2>/dev/null) $(wildcard extension/*/openapi.json)
distro: $(DISTRO)
$(DISTRO): builder-config.yaml $(SOURCES)
	mkdir -p _build
	$(GO) tool -modfile=tools/go.mod builder --config builder-config.yaml

## distro-extras: a second build with the loadbalancing and ClickHouse exporters, for the
## docs' scale-out and ClickHouse examples: make test validates them, make e2e runs scale-out
EXTRAS := _build/otelcol-mcpdrift-extras/otelcol-mcpdrift-extras
distro-extras: $(EXTRAS)
$(EXTRAS): docs/examples/builder-extras.yaml $(SOURCES)
	mkdir -p _build
	$(GO) tool -modfile=tools/go.mod builder --config docs/examples/builder-extras.yaml

## demo: the quickstart: a drifting MCP server, the collector and the demo agent (within 60 s);
## make demo DEMO_FLAGS=-dashboard keeps it running with the dashboard on http://127.0.0.1:13180/
demo: distro demo-bins
	$(BIN)/quickstart-demo $(DEMO_FLAGS)

demo-bins:
	$(GO) build -trimpath -o $(BIN)/quickstart-server ./examples/quickstart/server
	$(GO) build -trimpath -o $(BIN)/quickstart-demo ./examples/quickstart/demo
	$(GO) build -trimpath -o $(BIN)/demo-agent ./examples/agent

## jaeger: Jaeger v2 all-in-one for the backends e2e (version pinned in tools/jaeger)
JAEGER := _build/jaeger
jaeger: $(JAEGER)
$(JAEGER): tools/jaeger/go.mod tools/jaeger/go.sum
	scripts/backends/build-jaeger.sh $(JAEGER)

## e2e: end-to-end tests against the built distributions, real npm servers and backends,
## and the scale-out throughput figures (spans/s, two tiers versus one instance)
e2e: build distro distro-extras demo-bins jaeger
	$(GO) test -count=1 -tags e2e -timeout 15m -bench ScaleOutThroughput -benchtime 1x ./e2e/...

clean:
	rm -rf $(BIN) _build
