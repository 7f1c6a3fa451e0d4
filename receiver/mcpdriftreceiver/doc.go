// Package mcpdriftreceiver implements the mcpdrift receiver: it probes MCP
// servers on a schedule, keeps each server's confirmed contract as a
// baseline in a storage extension, and emits classified drift events (logs)
// and probe metrics.
//
//go:generate env GOWORK=off go -C ../../tools tool mdatagen $PWD/metadata.yaml
package mcpdriftreceiver
