// Package docscheck holds tests that keep the documentation honest: every
// example configuration under docs/examples is validated by the real
// Collector distribution it is written for, every example the docs show is
// the file that was validated, and the ocb lines docs/collector.md publishes
// pin the same versions as builder-config.yaml.
package docscheck
