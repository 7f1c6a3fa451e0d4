module github.com/mcpdrift/mcpdrift/contract

go 1.26.0

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/gobwas/glob v0.2.3
	github.com/mcpdrift/mcpdrift/internal/mcpwire v0.0.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/text v0.43.0
)

// The repository's other modules, from this checkout (see CONTRIBUTING.md).
replace github.com/mcpdrift/mcpdrift/internal/mcpwire => ../internal/mcpwire
