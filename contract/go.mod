module github.com/mcpdrift/mcpdrift/contract

go 1.26.0

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/gobwas/glob v0.2.3
	github.com/gowebpki/jcs v1.0.2
	github.com/mcpdrift/mcpdrift/dev/testkit v0.0.0
	github.com/mcpdrift/mcpdrift/internal/mcpwire v0.0.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/text v0.43.0
)

require go.yaml.in/yaml/v3 v3.0.6 // indirect

// The repository's other modules, from this checkout (see CONTRIBUTING.md).
replace (
	github.com/mcpdrift/mcpdrift/dev/testkit => ../dev/testkit
	github.com/mcpdrift/mcpdrift/internal/mcpwire => ../internal/mcpwire
)
