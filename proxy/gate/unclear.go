package gate

import (
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Unclear is the gate's refusal of a message a server could take for a
// tools/call but the gate cannot judge as one: it names its method, params
// or tool in more than one member, or in a member named in another case
// (parsers keep the first of repeated members or the last, and servers on
// encoding/json, mcp-go's, match names in any case: the gate would judge
// one tool and the server run another), or it has no id (a lenient server
// may run it all the same). nil: not a call, or one every server reads as
// the gate does.
func (g *Gate) Unclear(msg []byte) *Refusal {
	if !g.Active() {
		return nil
	}
	o, ok := jsonwire.NewObject(msg)
	if !ok {
		return nil
	}
	var methods, params []jsonwire.Member
	var id []byte
	for {
		m, more := o.Next()
		if !more {
			break
		}
		switch {
		case jsonrpc.KeyFold(m, "method"):
			methods = append(methods, m)
		case jsonrpc.KeyFold(m, "params"):
			params = append(params, m)
		case jsonwire.KeyIs(m.Key, "id"):
			id = m.Value
		}
	}
	call := false
	for _, m := range methods {
		if s, _ := jsonwire.String(m.Value); s == mcpwire.MethodToolsCall {
			call = true
		}
	}
	if !call {
		return nil
	}
	clear := !o.Err() && jsonrpc.IsID(id) && len(methods) == 1 && jsonwire.KeyIs(methods[0].Key, "method") &&
		len(params) == 1 && jsonwire.KeyIs(params[0].Key, "params")
	if clear {
		var names []jsonwire.Member
		p, _ := jsonwire.NewObject(params[0].Value)
		for m, more := p.Next(); more; m, more = p.Next() {
			if jsonrpc.KeyFold(m, "name") {
				names = append(names, m)
			}
		}
		clear = !p.Err() && len(names) == 1 && jsonwire.KeyIs(names[0].Key, "name")
		if clear {
			_, clear = jsonwire.String(names[0].Value)
		}
	}
	if clear {
		return nil
	}
	return &Refusal{code: semconv.RefusalToolNotApproved, rpcError: true, unclear: true}
}
