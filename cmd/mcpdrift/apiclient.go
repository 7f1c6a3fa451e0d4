package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
)

// The control plane commands (status, history, impact, accept) talk to the
// mcpdrift_api extension of a running Collector (docs/api.md).

// Environment variables of the control plane commands.
const (
	envAPI   = "MCPDRIFT_API"
	envToken = "MCPDRIFT_TOKEN"
)

// maxAPIResponse bounds what the CLI reads from the API.
const maxAPIResponse = 64 << 20

// apiFlags are the flags every control plane command takes.
type apiFlags struct {
	api, token, format string
	timeout            time.Duration
}

func (f *apiFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.api, "api", "", "the control plane's base URL (default $"+envAPI+", else http://"+apiwire.DefaultEndpoint+"); user:password@ in it is sent as basic auth")
	fl.StringVar(&f.token, "token", "", "bearer token for the API (default $"+envToken+"); never printed")
	fl.StringVar(&f.format, "format", "text", "output format: text or json (the API's response)")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "how long to wait for the API")
}

// client validates the flags and builds the API client.
func (f *apiFlags) client() (*apiClient, error) {
	if f.format != "text" && f.format != "json" {
		return nil, usageError("--format must be text or json, not %q", f.format)
	}
	if f.timeout <= 0 {
		return nil, usageError("--timeout must be positive")
	}
	raw := f.api
	if raw == "" {
		raw = os.Getenv(envAPI)
	}
	if raw == "" {
		raw = "http://" + apiwire.DefaultEndpoint
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, usageError("--api must be an http(s) URL, not %q", serverid.Display(raw))
	}
	token := f.token
	if token == "" {
		token = os.Getenv(envToken)
	}
	if strings.ContainsAny(token, "\r\n") {
		return nil, usageError("--token must be one line")
	}
	return &apiClient{base: base, token: token, http: &http.Client{Timeout: f.timeout}}, nil
}

// apiClient calls the control plane API.
type apiClient struct {
	base  *url.URL
	token string
	http  *http.Client
}

// endpoint is the URL of an API path under the base (which may have a
// path of its own, behind a proxy), each segment escaped.
func (c *apiClient) endpoint(query url.Values, segments ...string) string {
	escaped := make([]string, len(segments))
	for i, s := range segments {
		escaped[i] = url.PathEscape(s)
	}
	u := *c.base
	u.RawPath = strings.TrimSuffix(c.base.EscapedPath(), "/") + "/api/v1/" + strings.Join(escaped, "/")
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery, u.Fragment = query.Encode(), ""
	return u.String()
}

// call sends a request and decodes the answer into out, returning the raw
// body too (for --format json). API errors become exit codes.
func (c *apiClient) call(ctx context.Context, method, endpoint string, body any, out any) ([]byte, error) {
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint, reader)
	if err != nil {
		return nil, usageError("%v", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	where := serverid.Display(c.base.String())
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &exitError{code: exitUnreachable, err: fmt.Errorf("the control plane at %s did not answer: %s", where, c.redact(err))}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIResponse+1))
	if err != nil || len(raw) > maxAPIResponse {
		return nil, &exitError{code: exitUnreachable, err: fmt.Errorf("reading the answer of %s: %v", where, orTooLarge(err))}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, apiStatusError(resp.StatusCode, raw, where)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, &exitError{code: exitUnreachable, err: fmt.Errorf("%s did not answer with the control plane's JSON (is --api the mcpdrift_api endpoint?): %v", where, err)}
	}
	return raw, nil
}

func orTooLarge(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("the answer is larger than %d bytes", maxAPIResponse)
}

// redact says what went wrong without the URL's user info or the token.
func (c *apiClient) redact(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = fmt.Errorf("%s %s: %w", ue.Op, serverid.Display(ue.URL), ue.Err)
	}
	s := err.Error()
	if c.token != "" {
		s = strings.ReplaceAll(s, c.token, "[REDACTED]")
	}
	return s
}

// apiStatusError maps an API error response to an exit code, with the
// API's message (server text, escaped). The API's error body rides along
// for --format json.
func apiStatusError(status int, raw []byte, where string) error {
	var body apiwire.ErrorBody
	msg := fmt.Sprintf("HTTP %d", status)
	if json.Unmarshal(raw, &body) == nil && body.Error.Message != "" {
		msg = contract.SanitizeText(body.Error.Message)
	} else {
		body = apiwire.ErrorBody{}
	}
	var err error
	code := exitUnreachable
	switch status {
	case http.StatusBadRequest, http.StatusUnsupportedMediaType, http.StatusRequestEntityTooLarge:
		code, err = exitUsage, fmt.Errorf("the API refused the request: %s", msg)
	case http.StatusNotFound:
		code, err = exitNotFound, errors.New(msg)
	case http.StatusConflict:
		code, err = exitConflict, errors.New(msg)
	case http.StatusUnauthorized:
		err = fmt.Errorf("%s refused the credentials (set --token or $%s, or user:password@ in --api): %s", where, envToken, msg)
	default:
		err = fmt.Errorf("%s: %s", where, msg)
	}
	if body.Error.Code != "" {
		err = &apiAnswerError{body: body, err: err}
	}
	return &exitError{code: code, err: err}
}

// apiAnswerError is an error the API answered with its own error body.
type apiAnswerError struct {
	body apiwire.ErrorBody
	err  error
}

func (e *apiAnswerError) Error() string { return e.err.Error() }
func (e *apiAnswerError) Unwrap() error { return e.err }

// writeErrorJSON writes a failed command's error to standard output as the
// API writes its errors, {"error": {"code", "message", "parameter"}}, so a
// script reading --format json always gets JSON: the API's own body when it
// answered with one, else the exit code's name (unreachable, usage, ...)
// and the message. The exit code is the one the table gives either way.
func writeErrorJSON(w io.Writer, err error) error {
	var answer *apiAnswerError
	body := apiwire.ErrorBody{Error: apiwire.ErrorDetail{Code: exitName(err), Message: err.Error()}}
	if errors.As(err, &answer) {
		body = answer.body
	}
	b, mErr := json.Marshal(body)
	if mErr != nil {
		return mErr
	}
	return writeRaw(w, b)
}

// fetch calls the API (segments under /api/v1/, with query and body),
// decodes the answer into out and prints it: as it came with --format json,
// else with text.
func (f *apiFlags) fetch(cmd *cobra.Command, method string, query url.Values, body, out any, text func(io.Writer) error, segments ...string) error {
	raw, err := f.get(cmd, method, query, body, out, segments...)
	if err != nil {
		return err
	}
	if f.format == "json" {
		return writeRaw(cmd.OutOrStdout(), raw)
	}
	return text(cmd.OutOrStdout())
}

// get calls the API and decodes its answer into out; with --format json a
// failure is also written to standard output as JSON (writeErrorJSON).
func (f *apiFlags) get(cmd *cobra.Command, method string, query url.Values, body, out any, segments ...string) ([]byte, error) {
	c, err := f.client()
	var raw []byte
	if err == nil {
		raw, err = c.call(cmd.Context(), method, c.endpoint(query, segments...), body, out)
	}
	if err != nil && f.format == "json" {
		_ = writeErrorJSON(cmd.OutOrStdout(), err) // the message goes to stderr regardless
	}
	return raw, err
}

// writeRaw writes the API's JSON answer as it came, newline-terminated.
func writeRaw(w io.Writer, raw []byte) error {
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		raw = append(raw, '\n')
	}
	_, err := w.Write(raw)
	return err
}
