package witness

// formatExamples are readable values of the formats JSON Schema defines,
// each valid for its format and for as few others as possible. Addresses
// and names are from the ranges reserved for documentation (RFC 5737,
// RFC 3849, RFC 2606).
var formatExamples = map[string]string{
	"date-time":             "2025-01-01T00:00:00Z",
	"date":                  "2025-01-01",
	"time":                  "12:00:00Z",
	"duration":              "P1D",
	"period":                "2025-01-01T00:00:00Z/P1D",
	"email":                 "user@example.com",
	"idn-email":             "user@example.com",
	"hostname":              "example.com",
	"idn-hostname":          "example.com",
	"ipv4":                  "192.0.2.1",
	"ipv6":                  "2001:db8::1",
	"uri":                   "https://example.com/",
	"iri":                   "https://example.com/",
	"uri-reference":         "/example",
	"iri-reference":         "/example",
	"uri-template":          "https://example.com/{id}",
	"uuid":                  "00000000-0000-4000-8000-000000000000",
	"json-pointer":          "/example",
	"relative-json-pointer": "0/example",
	"regex":                 "^example$",
	"semver":                "1.0.0",
}

// plainStrings are strings tried where a value must avoid some format or
// pattern: a word, a phrase with a space (no URI, host or e-mail address),
// and a few shapes patterns commonly exclude.
var plainStrings = []string{"example", "example value", "Example", "EXAMPLE", "example-1", "0", "x", "", "(", "example.com"}
