package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
)

// Protocol versions the probe speaks, newest first.
const modernVersion = mcpwire.ProtocolStateless

var legacyVersions = mcpwire.ProtocolsInitialize

// handshake is what the server said about itself.
type handshake struct {
	generation      contract.SpecGeneration
	protocolVersion string
	capabilities    json.RawMessage
	serverInfo      json.RawMessage
	instructions    *string
}

// errLegacy signals that server/discover identified a legacy server: the
// probe falls back to initialize. preferred is the version to ask for.
type errLegacy struct {
	preferred string
	why       string
	// late is, when the server stayed silent on stdio, the discover request
	// (asking for version), still awaiting an answer.
	late    *pending
	version string
}

func (e *errLegacy) Error() string { return "legacy server: " + e.why }

// discover tries the 2026-07-28 handshake. Per the spec's backwards
// compatibility rules, only a DiscoverResult or a recognized modern
// JSON-RPC error identifies a modern server; anything else (any other
// error code, a 4xx without a modern error body, and on stdio silence)
// identifies a legacy one and yields *errLegacy.
func (p *prober) discover(ctx context.Context, s *session) (*handshake, error) {
	version := modernVersion
	for attempt := 0; attempt < 2; attempt++ {
		s.modernVersion = version
		s.c.negotiated(version, true)
		p.progress(StepDiscover)
		result, err := p.askDiscover(ctx, s)
		if err == nil {
			hs, err := p.discovered(result, version)
			if err != nil {
				s.modernVersion = ""
				s.c.negotiated("", false)
			}
			return hs, err
		}
		s.modernVersion = ""
		s.c.negotiated("", false)
		var re *rpcError
		var se *statusError
		var silent *errSilent
		switch {
		case errors.As(err, &silent):
			return nil, &errLegacy{why: "no answer to server/discover", late: silent.late, version: version}
		case errors.As(err, &re) && re.Code == codeUnsupportedProtocolVersion:
			next, legacy, nerr := negotiate(supportedOf(re.Data))
			if nerr != nil {
				return nil, nerr
			}
			if next == "" {
				return nil, &errLegacy{preferred: legacy, why: "it supports only initialize-era versions"}
			}
			version = next
			continue
		case errors.As(err, &re) && isModernCode(re.Code):
			return nil, &Error{Class: ClassProtocolError, RPCCode: re.Code, Err: re}
		case errors.As(err, &re):
			return nil, &errLegacy{why: fmt.Sprintf("server/discover answered error %d", re.Code)}
		case errors.As(err, &se):
			return nil, p.discoverStatus(se)
		default:
			return nil, err
		}
	}
	return nil, failure(ClassProtocolError, "server/discover: no mutually supported protocol version")
}

// discoverStatus classifies an HTTP refusal of server/discover.
func (p *prober) discoverStatus(se *statusError) error {
	switch {
	case se.modern():
		if se.rpc.Code == codeUnsupportedProtocolVersion {
			if _, legacy, err := negotiate(supportedOf(se.rpc.Data)); err == nil && legacy != "" {
				return &errLegacy{preferred: legacy, why: "it supports only initialize-era versions"}
			}
		}
		return &Error{Class: ClassProtocolError, StatusCode: se.code, RPCCode: se.rpc.Code, Err: errors.New(p.rt.red.text(se.Error()))}
	case se.code == http.StatusUnauthorized, se.code == http.StatusForbidden && len(se.challenge) > 0:
		return se.asProbeError(p.rt.red)
	case se.code >= 400 && se.code < 500 && se.code != http.StatusTooManyRequests:
		return &errLegacy{why: fmt.Sprintf("server/discover was refused with HTTP %d", se.code)}
	}
	return se.asProbeError(p.rt.red)
}

// supportedOf reads the supported list of UnsupportedProtocolVersionError data.
func supportedOf(data json.RawMessage) []string {
	var d struct {
		Supported []string `json:"supported"`
	}
	_ = json.Unmarshal(data, &d)
	return d.Supported
}

// negotiate picks from the versions a server supports: the modern version
// to use (the probe speaks one), else the best initialize-era version.
func negotiate(supported []string) (modern, legacy string, err error) {
	if len(supported) == 0 {
		return "", "", failure(ClassProtocolError, "unsupported protocol version, and the server did not say which it supports")
	}
	if slices.Contains(supported, modernVersion) {
		return modernVersion, "", nil
	}
	for _, v := range legacyVersions {
		if slices.Contains(supported, v) {
			return "", v, nil
		}
	}
	return "", "", failure(ClassProtocolError, "no mutually supported protocol version (the server supports %s)", contract.QuoteForDisplay(contract.TruncateBytes(fmt.Sprint(supported), 200)))
}

// discovered reads a DiscoverResult.
func (p *prober) discovered(result json.RawMessage, requested string) (*handshake, error) {
	var r struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      json.RawMessage            `json:"capabilities"`
		Instructions      json.RawMessage            `json:"instructions"`
		Meta              map[string]json.RawMessage `json:"_meta"`
		ResultType        json.RawMessage            `json:"resultType"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, failure(ClassProtocolError, "server/discover result: %v", errText(err))
	}
	if err := checkResultType(r.ResultType); err != nil {
		return nil, err
	}
	if !slices.Contains(r.SupportedVersions, requested) {
		if _, legacy, err := negotiate(r.SupportedVersions); err == nil && legacy != "" {
			return nil, &errLegacy{preferred: legacy, why: "server/discover lists only initialize-era versions"}
		}
		return nil, failure(ClassProtocolError, "server/discover does not list %s among supportedVersions", requested)
	}
	instr, err := instructionsOf(r.Instructions)
	if err != nil {
		return nil, err
	}
	return &handshake{
		generation:      contract.SpecStateless2026,
		protocolVersion: requested,
		capabilities:    r.Capabilities,
		serverInfo:      r.Meta[mcpwire.MetaServerInfo],
		instructions:    instr,
	}, nil
}

// initialize sends the initialize-era handshake request; initialized
// completes the handshake.
func (p *prober) initialize(ctx context.Context, s *session, version string) (*handshake, error) {
	if version == "" {
		version = legacyVersions[0]
	}
	p.progress(StepInitialize)
	params := map[string]any{
		"protocolVersion": version,
		"capabilities":    s.clientCaps,
		"clientInfo":      s.clientInfo,
	}
	result, err := s.request(ctx, string(StepInitialize), params, p.rt.opts.RequestTimeout)
	if err != nil {
		return nil, err
	}
	var r struct {
		ProtocolVersion *string         `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		Instructions    json.RawMessage `json:"instructions"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, failure(ClassProtocolError, "initialize result: %v", errText(err))
	}
	if r.ProtocolVersion == nil || *r.ProtocolVersion == "" {
		return nil, failure(ClassProtocolError, "the initialize result has no protocolVersion")
	}
	if !slices.Contains(legacyVersions, *r.ProtocolVersion) {
		p.rt.opts.Logger.Debug("probe: server chose a protocol version the probe does not know", "version", contract.TruncateBytes(*r.ProtocolVersion, 40))
	}
	instr, err := instructionsOf(r.Instructions)
	if err != nil {
		return nil, err
	}
	return &handshake{
		generation:      contract.SpecStateful2025,
		protocolVersion: *r.ProtocolVersion,
		capabilities:    r.Capabilities,
		serverInfo:      r.ServerInfo,
		instructions:    instr,
	}, nil
}

// initialized adopts the version initialize negotiated and sends
// notifications/initialized.
func (p *prober) initialized(ctx context.Context, s *session, hs *handshake) error {
	s.c.negotiated(hs.protocolVersion, false)
	p.progress(StepInitialized)
	return s.notify(ctx, string(StepInitialized), p.rt.opts.RequestTimeout)
}

// instructionsOf reads an optional instructions member.
func instructionsOf(raw json.RawMessage) (*string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, failure(ClassProtocolError, "instructions is not a string")
	}
	return &s, nil
}

// checkResultType enforces the 2026-07-28 rule on a raw resultType member:
// absent means complete, an unrecognized value is invalid. A probe never
// sends input, so input_required is unusable too.
func checkResultType(raw []byte) error {
	if raw == nil {
		return nil
	}
	var rt string
	if err := json.Unmarshal(raw, &rt); err != nil {
		return failure(ClassProtocolError, "resultType is not a string")
	}
	if rt == "complete" {
		return nil
	}
	return failure(ClassProtocolError, "unexpected resultType %s", contract.QuoteForDisplay(contract.TruncateBytes(rt, 40)))
}
