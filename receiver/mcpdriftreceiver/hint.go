package mcpdriftreceiver

import (
	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/probe"
)

// rediscoverEvery: one probe in this many makes the full handshake although
// a hint is known, so a server that learned server/discover is noticed.
const rediscoverEvery = 10

// handshakeHint remembers that a target is initialize-era, so its probes skip
// the server/discover attempt that cannot succeed: a balancer then sees one
// request that picks a backend per probe (initialize; the session keeps the
// rest on that backend) instead of two. It is dropped on any failure.
type handshakeHint struct {
	known probe.Known
	uses  int
}

// next is the hint for the next probe (the zero value: discover first).
func (h *handshakeHint) next() probe.Known {
	if h.known.Generation == "" || h.uses >= rediscoverEvery-1 {
		return probe.Known{}
	}
	h.uses++
	return h.known
}

// learn records what a probe made with hint used found.
func (h *handshakeHint) learn(used probe.Known, snap *contract.Snapshot, err error) {
	switch {
	case err != nil || snap.SpecGeneration != contract.SpecStateful2025:
		*h = handshakeHint{}
	case used.Generation == "":
		// A full handshake chose initialize: hint the next probes.
		*h = handshakeHint{known: probe.Known{Generation: snap.SpecGeneration, ProtocolVersion: snap.ProtocolVersion}}
	}
}
