package config

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"time"
)

// OAuth turns on MCP authorization for the stdio → HTTP proxy: when the
// upstream answers 401 (or 403 insufficient_scope), the proxy runs the
// authorization code flow with PKCE that the MCP authorization spec
// describes — protected resource metadata, authorization server metadata,
// client registration, the user's consent in a browser, the token — and
// sends the request again with the token. The flow is the go-sdk's
// auth.AuthorizationCodeHandler; the proxy adds the browser redirect's
// loopback listener and keeps the tokens between runs.
type OAuth struct {
	// ClientID names a client registered with the authorization server
	// beforehand, ClientSecret its secret (empty for a public client).
	// Without a ClientID the proxy registers itself (dynamic client
	// registration).
	ClientID, ClientSecret string
	// RedirectPort is the loopback port the browser is sent back to
	// (http://127.0.0.1:PORT/callback); 0 picks a free one each time, for
	// authorization servers that accept any loopback port (RFC 8252).
	RedirectPort int
	// Store is the directory that keeps tokens between runs, one file per
	// upstream, readable by the user alone; "" keeps none.
	Store string
	// Open shows the user the authorization URL (the CLI prints it and
	// opens a browser). Required.
	Open func(url string) error
	// Timeout bounds the wait for the user's consent; 0 is 5 minutes.
	Timeout time.Duration
}

// TokenFile is the file in Store that keeps upstream's token, named by a
// hash of the URL (which may hold a secret); "" when there is no Store.
// Removing it makes the user authorize again at the next run.
func (o *OAuth) TokenFile(upstream string) string {
	if o.Store == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(upstream))
	return filepath.Join(o.Store, hex.EncodeToString(sum[:12])+".json")
}
