package contract

import (
	"fmt"
	"strings"
)

// Severity says whom a change hurts. Severities are ordered:
// None < Info < Compatible < Warning < Breaking.
type Severity int8

const (
	// None is no change at all; a policy that maps a rule to none drops it.
	None Severity = iota
	// Info is recorded but never alerts: no semantic effect on callers.
	Info
	// Compatible changes extend the contract without breaking a caller.
	Compatible
	// Warning changes can change agent behaviour without failing a call.
	Warning
	// Breaking changes make calls that worked fail, or drop a guarantee.
	Breaking
)

// worstFirst lists the severities that changes carry, worst first.
var worstFirst = [...]Severity{Breaking, Warning, Compatible, Info}

var severityNames = [...]string{None: "none", Info: "info", Compatible: "compatible", Warning: "warning", Breaking: "breaking"}

// String returns "none", "info", "compatible", "warning" or "breaking".
func (s Severity) String() string {
	if s < None || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity reads a severity name (case-insensitive).
func ParseSeverity(name string) (Severity, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for s, sn := range severityNames {
		if n == sn {
			return Severity(s), nil
		}
	}
	return None, fmt.Errorf("unknown severity %q (want breaking, warning, compatible, info or none)", name)
}

// MarshalText writes the severity name.
func (s Severity) MarshalText() ([]byte, error) {
	if s < None || int(s) >= len(severityNames) {
		return nil, fmt.Errorf("invalid severity %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
