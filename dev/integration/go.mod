// The agent-side modules' tests that need development tooling: dev/testkit
// (real npm servers, benchmark baselines, the digest vectors) and the
// interceptor's cross-SDK harness (itest). Go has no test-only requirements,
// so they live here, where no shipped module requires them (CONTRIBUTING.md
// "Modules"); each package tests the package it is named for.
module github.com/mcpdrift/mcpdrift/dev/integration

go 1.26.0

require (
	github.com/gowebpki/jcs v1.0.2
	github.com/mark3labs/mcp-go v1.2.1
	github.com/mcpdrift/mcpdrift/contract v0.0.0
	github.com/mcpdrift/mcpdrift/dev/testkit v0.0.0
	github.com/mcpdrift/mcpdrift/interceptor v0.0.0
	github.com/mcpdrift/mcpdrift/interceptor/gosdk v0.0.0
	github.com/mcpdrift/mcpdrift/interceptor/mcpgo v0.0.0
	github.com/mcpdrift/mcpdrift/internal/mcpwire v0.0.0
	github.com/mcpdrift/mcpdrift/semconv v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/spf13/cast v1.10.0 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	golang.org/x/oauth2 v0.37.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)

// The repository's other modules, from this checkout (see CONTRIBUTING.md).
replace (
	github.com/mcpdrift/mcpdrift/contract => ../../contract
	github.com/mcpdrift/mcpdrift/dev/testkit => ../testkit
	github.com/mcpdrift/mcpdrift/interceptor => ../../interceptor
	github.com/mcpdrift/mcpdrift/interceptor/gosdk => ../../interceptor/gosdk
	github.com/mcpdrift/mcpdrift/interceptor/mcpgo => ../../interceptor/mcpgo
	github.com/mcpdrift/mcpdrift/internal/mcpwire => ../../internal/mcpwire
	github.com/mcpdrift/mcpdrift/semconv => ../../semconv
)
