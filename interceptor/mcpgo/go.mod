module github.com/mcpdrift/mcpdrift/interceptor/mcpgo

go 1.26.0

require (
	github.com/mark3labs/mcp-go v1.2.1
	github.com/mcpdrift/mcpdrift/interceptor v0.0.0
	github.com/mcpdrift/mcpdrift/internal/mcpwire v0.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mcpdrift/mcpdrift/contract v0.0.0 // indirect
	github.com/mcpdrift/mcpdrift/semconv v0.0.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/spf13/cast v1.10.0 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

// The repository's other modules, from this checkout (see CONTRIBUTING.md).
replace (
	github.com/mcpdrift/mcpdrift/contract => ../../contract
	github.com/mcpdrift/mcpdrift/interceptor => ../
	github.com/mcpdrift/mcpdrift/internal/mcpwire => ../../internal/mcpwire
	github.com/mcpdrift/mcpdrift/semconv => ../../semconv
)
