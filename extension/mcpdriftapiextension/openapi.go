package mcpdriftapiextension

import (
	_ "embed"
)

// openAPI is the API's description, served at /api/v1/openapi.json. Its
// schemas are checked against every handler's responses (openapi_test.go)
// and its examples are testdata/*.json.
//
//go:embed openapi.json
var openAPI []byte
