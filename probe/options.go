package probe

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// Defaults for Options fields left zero.
const (
	DefaultTimeout         = 30 * time.Second
	DefaultRequestTimeout  = 10 * time.Second
	DefaultDiscoverTimeout = 3 * time.Second
	DefaultSettle          = 500 * time.Millisecond
	DefaultMaxSettleRounds = 5
	DefaultMaxSettleTime   = 10 * time.Second
	DefaultMaxPages        = 1000
	DefaultMaxStderrBytes  = 64 << 10
	// DefaultMaxServerRequests bounds the requests a server may send the
	// probe in one probe (real servers send a few: roots/list, ping).
	DefaultMaxServerRequests = 100
	// messageSlack is what a JSON-RPC envelope adds around a result.
	messageSlack = 64 << 10
)

// Options tune a probe. The zero value is usable: every zero field takes
// its default, except Settle, whose zero lists once (as settle: 0s does in
// the receiver and --settle 0 in the CLI).
type Options struct {
	// Timeout bounds the whole probe (connect, listings, settling, close).
	Timeout time.Duration
	// RequestTimeout bounds each request, including reading its response
	// (a slow-drip or endless SSE stream ends here).
	RequestTimeout time.Duration
	// DiscoverTimeout is how long a stdio server may stay silent on
	// server/discover before the probe falls back to initialize (the spec
	// lets a legacy server ignore unknown methods).
	DiscoverTimeout time.Duration

	// Settle is the quiet period after the last list_changed notification
	// (or after a listing) before the probe lists again; listings repeat
	// until two consecutive ones agree. 0 lists once, without settling;
	// DefaultSettle is what the CLI and the receiver use unless told
	// otherwise. Negative values are invalid. See docs/probe.md#settling.
	Settle time.Duration
	// SettleOnChange, with Settle > 0, settles only a server that announced
	// a change: the probe listens for list_changed as settling does, and
	// when none has arrived by the end of its first listing it lists once.
	// For a caller that probes the same server again at once, knowing from
	// earlier settled probes that it does not change after a client
	// connects (the receiver's confirmation samples).
	SettleOnChange bool
	// MaxSettleRounds bounds the listings made while settling. A server
	// still changing after that is snapshotted as last listed, with
	// Result.Settled false.
	MaxSettleRounds int
	// MaxSettleTime bounds settling: no re-listing starts later than this
	// after the first listing, nor once 90 % of the time left before the
	// probe's deadline has passed; a re-listing under way may end until the
	// latter (a slow server is re-listed, not given up on). Unsettled, the
	// snapshot is the last complete listing, with Result.Settled false: a
	// server that never stops announcing changes is not a timeout.
	MaxSettleTime time.Duration

	// Equivalent, when set, decides whether two listings of one kind taken
	// while settling are the same contract although their digests differ
	// (the receiver masks fields it knows change on every probe), so a
	// server with a volatile field settles in two listings, not
	// MaxSettleRounds. Nil: only equal digests agree.
	Equivalent func(kind contract.Kind, a, b contract.Listing) bool

	// Known is what an earlier probe of the same server learned about its
	// handshake; the zero value knows nothing.
	Known Known

	// Limits bound each document (a list result page) and each listing.
	Limits contract.Limits
	// MaxMessageBytes bounds one JSON-RPC message (an HTTP body, a stdio
	// line). Default: Limits.MaxDocumentBytes plus 64 KiB for the envelope.
	MaxMessageBytes int
	// MaxEventBytes bounds one server-sent event. Default: MaxMessageBytes.
	MaxEventBytes int
	// MaxTotalBytes bounds everything received in one probe. Default: four
	// times MaxMessageBytes.
	MaxTotalBytes int64
	// MaxPages bounds the pages of one listing (a cursor that never ends).
	MaxPages int
	// MaxStderrBytes bounds the stderr tail kept from a stdio server.
	MaxStderrBytes int
	// MaxServerRequests bounds the requests (roots/list, ping, …) a server
	// may send the probe in one probe; one more fails the probe with
	// protocol_error. Each is answered (at most four at a time), so without
	// a bound a server could make the probe send a reply for every line it
	// streams.
	MaxServerRequests int

	// Logger receives debug records of each step; nil discards them.
	// Records never hold a configured secret.
	Logger *slog.Logger
	// Progress, when set, is called as the probe enters each step (for a
	// CLI progress line). It must not block.
	Progress func(Step)
	// Now returns the observation time (default time.Now).
	Now func() time.Time
	// ClientName and ClientVersion are sent as clientInfo.
	ClientName, ClientVersion string
}

// Known is a hint from an earlier probe of the same server. With Generation
// stateful_2025 the probe skips server/discover, which such a server
// refuses, and sends initialize at once asking for ProtocolVersion: behind a
// load balancer that pins a session to a backend, the probe then makes one
// pick instead of two (the sessionless discover lands elsewhere). A stale
// hint fails the probe (the caller retries without it); a server that
// learned server/discover is only found by probing without the hint, which
// the caller does now and then.
type Known struct {
	Generation      contract.SpecGeneration
	ProtocolVersion string
}

// MaxDepth is the largest Limits.MaxDepth the probe accepts: a message
// nests its result one level deeper, and the probe reads messages at most
// maxMessageDepth levels deep.
const MaxDepth = maxMessageDepth - 1

// ValidateMaxDepth reports a limits max_depth the probe cannot honour, for
// callers that validate their own configuration (the receiver).
func ValidateMaxDepth(depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("max_depth must be at most %d (the probe reads messages at most %d levels deep, and a message nests its result one level deeper), got %d", MaxDepth, maxMessageDepth, depth)
	}
	return nil
}

// Validate reports options that cannot be meant.
func (o *Options) Validate() error {
	if o.Settle < 0 {
		return errors.New("settle must not be negative (0 lists once, without settling)")
	}
	if o.Timeout < 0 || o.RequestTimeout < 0 || o.DiscoverTimeout < 0 || o.MaxSettleRounds < 0 || o.MaxSettleTime < 0 ||
		o.MaxMessageBytes < 0 || o.MaxEventBytes < 0 || o.MaxTotalBytes < 0 || o.MaxPages < 0 || o.MaxStderrBytes < 0 || o.MaxServerRequests < 0 {
		return errors.New("probe options must not be negative")
	}
	if err := ValidateMaxDepth(o.Limits.MaxDepth); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	return o.Limits.Validate()
}

// withDefaults returns a copy with every zero field set.
func (o Options) withDefaults() Options {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.DiscoverTimeout == 0 {
		o.DiscoverTimeout = DefaultDiscoverTimeout
	}
	if o.MaxSettleRounds == 0 {
		o.MaxSettleRounds = DefaultMaxSettleRounds
	}
	if o.MaxSettleTime == 0 {
		o.MaxSettleTime = DefaultMaxSettleTime
	}
	d := contract.DefaultLimits()
	if o.Limits.MaxDocumentBytes <= 0 {
		o.Limits.MaxDocumentBytes = d.MaxDocumentBytes
	}
	if o.Limits.MaxDepth <= 0 {
		o.Limits.MaxDepth = d.MaxDepth
	}
	if o.Limits.MaxDefinitions <= 0 {
		o.Limits.MaxDefinitions = d.MaxDefinitions
	}
	if o.Limits.MaxStringBytes <= 0 {
		o.Limits.MaxStringBytes = d.MaxStringBytes
	}
	if o.MaxMessageBytes == 0 {
		o.MaxMessageBytes = o.Limits.MaxDocumentBytes + messageSlack
	}
	if o.MaxEventBytes == 0 {
		o.MaxEventBytes = o.MaxMessageBytes
	}
	if o.MaxTotalBytes == 0 {
		o.MaxTotalBytes = 4 * int64(o.MaxMessageBytes)
	}
	if o.MaxPages == 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxStderrBytes == 0 {
		o.MaxStderrBytes = DefaultMaxStderrBytes
	}
	if o.MaxServerRequests == 0 {
		o.MaxServerRequests = DefaultMaxServerRequests
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ClientName == "" {
		o.ClientName = "mcpdrift-probe"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "1"
	}
	return o
}
