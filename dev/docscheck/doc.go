// Package docscheck holds tests that keep the documentation honest: every
// example configuration under docs/examples is validated by the real
// Collector distribution it is written for, every example the docs show is
// the file that was validated, every other YAML block of README.md and
// docs/*.md is a marked fragment that is checked as what it is, every command
// output the docs show is compared with a real run of the command its marker
// names, and the ocb lines docs/collector.md publishes pin the same versions
// as builder-config.yaml. CONTRIBUTING.md "Docs" lists the markers.
package docscheck
