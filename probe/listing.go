package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// listing is one complete listing of one kind, with the raw pages it came
// from so that an unchanged re-listing costs a byte comparison, not a parse.
type listing struct {
	raws  [][]byte
	pages []contract.Page
	defs  contract.Listing
}

// listings holds one listing per advertised kind.
type listings map[contract.Kind]*listing

// advertisedKinds are the kinds whose capability the server advertised
// (resource templates come with resources).
func advertisedKinds(caps json.RawMessage) ([]contract.Kind, error) {
	if len(caps) == 0 || string(caps) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(caps, &m); err != nil || m == nil {
		return nil, failure(ClassProtocolError, "the server's capabilities are not a JSON object")
	}
	on := func(name string) bool {
		v, ok := m[name]
		return ok && string(v) != "null" && string(v) != "false"
	}
	var kinds []contract.Kind
	if on("tools") {
		kinds = append(kinds, contract.KindTool)
	}
	if on("prompts") {
		kinds = append(kinds, contract.KindPrompt)
	}
	if on("resources") {
		kinds = append(kinds, contract.KindResource, contract.KindResourceTemplate)
	}
	return kinds, nil
}

// collect lists every kind completely. prev, when set, is the previous
// round: pages that come back byte-identical are not parsed again.
func (p *prober) collect(ctx context.Context, s *session, kinds []contract.Kind, prev listings) (listings, error) {
	out := listings{}
	for _, k := range kinds {
		l, err := p.listKind(ctx, s, k, prev[k])
		if err != nil {
			return nil, err
		}
		out[k] = l
	}
	return out, nil
}

// listKind follows nextCursor to the end of one listing, refusing a cursor
// seen before (a loop) and more than MaxPages pages.
func (p *prober) listKind(ctx context.Context, s *session, kind contract.Kind, prev *listing) (*listing, error) {
	step := listStep(kind)
	p.progress(step)
	l := &listing{}
	seen := map[string]bool{}
	var cursor *string
	for page := 0; ; page++ {
		if page >= p.rt.opts.MaxPages {
			return nil, &Error{Class: ClassTooLarge, Step: step, Err: errors.New("the listing has more pages than the page limit")}
		}
		var params map[string]any
		if cursor != nil {
			params = map[string]any{"cursor": *cursor}
		}
		raw, err := s.request(ctx, string(step), params, p.rt.opts.RequestTimeout)
		if err != nil {
			var re *rpcError
			if kind == contract.KindResourceTemplate && page == 0 && errors.As(err, &re) && re.Code == codeMethodNotFound {
				// Servers of the 2024 era often lack templates under resources.
				return &listing{defs: contract.Listing{}}, nil
			}
			return nil, p.classify(step, err)
		}
		parsed, err := p.parsePage(kind, raw, prev, page)
		if err != nil {
			return nil, p.classify(step, err)
		}
		l.raws = append(l.raws, raw)
		l.pages = append(l.pages, parsed)
		next := parsed.NextCursor
		if next == nil || *next == "" {
			break
		}
		if seen[*next] {
			return nil, &Error{Class: ClassInvalidListing, Step: step, Err: errors.New("nextCursor repeats a cursor already followed (a pagination loop)")}
		}
		seen[*next] = true
		cursor = next
	}
	defs, err := p.rt.opts.Limits.HashPages(kind, l.pages...)
	if err != nil {
		return nil, p.classify(step, err)
	}
	l.defs = defs
	return l, nil
}

// parsePage hashes one list result, reusing the previous round's parse
// when the bytes did not change.
func (p *prober) parsePage(kind contract.Kind, raw []byte, prev *listing, page int) (contract.Page, error) {
	if prev != nil && page < len(prev.raws) && bytes.Equal(prev.raws[page], raw) {
		return prev.pages[page], nil
	}
	m, err := topMembers(raw)
	if err != nil {
		return contract.Page{}, failure(ClassProtocolError, "the %s result is not a JSON object: %v", kind.ListMember(), err)
	}
	if err := checkResultType(m["resultType"]); err != nil {
		return contract.Page{}, err
	}
	parsed, err := p.rt.opts.Limits.ParsePage(raw)
	if err != nil {
		return contract.Page{}, err
	}
	if _, ok := parsed.Definitions[kind]; !ok {
		return contract.Page{}, failure(ClassInvalidListing, "the result has no %q array", kind.ListMember())
	}
	// A server that echoes a credential into a definition: the page was
	// checked as sent; the snapshot holds it redacted.
	if clean, ok := p.rt.red.json(raw); ok {
		return p.rt.opts.Limits.ParsePage(clean)
	}
	return parsed, nil
}

// sameContract reports whether two rounds listed the same definitions, or
// definitions the caller holds equivalent.
func sameContract(a, b listings, equivalent func(contract.Kind, contract.Listing, contract.Listing) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, la := range a {
		lb, ok := b[k]
		if !ok {
			return false
		}
		if la.defs.SetDigest() != lb.defs.SetDigest() && (equivalent == nil || !equivalent(k, la.defs, lb.defs)) {
			return false
		}
	}
	return true
}

// settle lists until two consecutive rounds agree with no list_changed in
// between, waiting for a quiet period before each re-listing. No round
// starts after MaxSettleTime; a round started before it may finish until
// listingContext ends, so that a server whose listings are slow (or a probe
// starved of CPU) is re-listed, not given up on while the probe has time
// left. A re-listing cut short by that end is dropped and the previous
// round stands, settled or not. With SettleOnChange a first listing with no
// list_changed heard by its end stands alone.
func (p *prober) settle(ctx context.Context, s *session, kinds []contract.Kind) (listings, bool, int, error) {
	cur, err := p.collect(ctx, s, kinds, nil)
	if err != nil {
		return nil, false, 1, err
	}
	rounds := 1
	if p.rt.opts.Settle == 0 || p.rt.opts.SettleOnChange && s.changes.Load() == 0 {
		return cur, false, rounds, nil
	}
	lctx, cancelList := listingContext(ctx)
	defer cancelList()
	// No round starts after MaxSettleTime, nor after lctx's end (a child's
	// deadline is never later than its parent's).
	wctx, cancelWait := context.WithTimeout(lctx, p.rt.opts.MaxSettleTime)
	defer cancelWait()
	for rounds < p.rt.opts.MaxSettleRounds {
		if err := s.quiet(wctx, p.rt.opts.Settle); err != nil {
			if ctx.Err() != nil {
				return nil, false, rounds, &Error{Class: ClassTimeout, Step: StepSettle, Err: err}
			}
			break // settling ran out of time while the server kept announcing changes
		}
		before := s.changes.Load()
		next, err := p.collect(lctx, s, kinds, cur)
		if err != nil {
			if lctx.Err() != nil && ctx.Err() == nil {
				break
			}
			return nil, false, rounds, err
		}
		rounds++
		same := sameContract(cur, next, p.rt.opts.Equivalent) && s.changes.Load() == before
		cur = next
		if same {
			return cur, true, rounds, nil
		}
	}
	return cur, false, rounds, nil
}

// listingContext is ctx ending when a re-listing must be done: at 90 % of
// the time left before the probe's deadline, so that the snapshot is
// assembled before it. Without a deadline it is ctx.
func listingContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	now := time.Now()
	return context.WithDeadline(ctx, now.Add(d.Sub(now)*9/10))
}
