// Package mcpimpactprocessor implements the Collector processor "mcpimpact".
//
// One instance per component ID serves a traces pipeline and a logs
// pipeline. On the traces path it recognises MCP tool-call spans, indexes
// them in a bounded, time-windowed index keyed by (server, tool, agent,
// session, digest), and marks calls that were made with a tool definition
// other than the server's current one. On the logs path it learns current
// tool digests from mcpdrift.snapshot events and answers each mcpdrift.drift
// event with the agents and sessions it affects: the drift record gets impact
// totals and is followed by one mcpdrift.impact record per changed tool and
// calling agent.
//
// See docs/mcpimpact.md for configuration and semantics.
//
//go:generate env GOWORK=off go -C ../../tools tool mdatagen $PWD/metadata.yaml
package mcpimpactprocessor // import "github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor"
