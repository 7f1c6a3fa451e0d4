package semconv

// docs/attributes.md is generated from the constants of this package and
// their doc comments (plus docs/events.md and the components'
// metadata.yaml); dev/attrdoc's test fails when it is out of date.
//go:generate go -C .. run ./dev/attrdoc -root .
