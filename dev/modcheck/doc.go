// Package modcheck holds tests that keep the repository's Go modules
// fitting together: every module is in go.work and in the Makefile's
// MODULES, every module requires its siblings through a replace to the
// checkout, the ocb manifests replace every sibling the root module
// requires, and an agent that imports an interceptor front-end inherits no
// Collector module (CONTRIBUTING.md, docs/design.md "Modules").
package modcheck
