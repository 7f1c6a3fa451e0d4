package proxy

import "time"

// SetSessionBounds sets the gate's session bounds (tests only).
func (h *Handler) SetSessionBounds(idle time.Duration, max int) {
	h.gate.mu.Lock()
	h.gate.sessions.Idle, h.gate.sessions.Max = idle, max
	h.gate.mu.Unlock()
}

// GateSessions is the number of sessions the gate keeps state for.
func (h *Handler) GateSessions() int {
	h.gate.mu.Lock()
	defer h.gate.mu.Unlock()
	return h.gate.sessions.Len()
}
