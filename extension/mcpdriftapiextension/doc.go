// Package mcpdriftapiextension implements the Collector extension
// "mcpdrift_api": the drift control plane. It serves a JSON API (server
// status, drift history, consumer-impact queries, accept; openapi.json) and
// the dashboard's static files over one confighttp server, with the
// Collector's TLS, CORS and auth extensions. It holds no drift state of its
// own: the mcpdrift receiver and the mcpimpact processor find it by
// component ID (control_plane: mcpdrift_api) and register read-only views
// (package controlplane); the API answers from them.
//
// See docs/api.md.
//
//go:generate go -C ../../tools tool mdatagen $PWD/metadata.yaml
package mcpdriftapiextension // import "github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension"
