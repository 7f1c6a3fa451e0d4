package gate

import "github.com/mcpdrift/mcpdrift/semconv"

// Unclear is the gate's refusal of a message a server could take for a
// tools/call but the gate cannot judge as one (unclear: the proxy read it
// so, jsonrpc.Message.Unclear says how), or nil: the message is clear, or
// the gate refuses nothing.
func (g *Gate) Unclear(unclear bool) *Refusal {
	if !unclear || !g.Active() {
		return nil
	}
	return &Refusal{code: semconv.RefusalToolNotApproved, rpcError: true, unclear: true}
}
