package mcpdriftapiextension

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// Bounds of query parameters.
const (
	defaultDriftLimit = 100
	maxDriftLimit     = 1000
)

func (e *apiExtension) info(r *http.Request) (any, *apiError) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return nil, err
	}
	out := apiwire.Info{APIVersion: apiwire.APIVersion}
	out.Drift.Components = []string{}
	for _, d := range e.driftSources() {
		out.Drift.Components = append(out.Drift.Components, d.id.String())
	}
	out.Drift.Available = len(out.Drift.Components) > 0
	if !out.Drift.Available {
		out.Drift.Message = msgNoReceiver
	}
	out.Impact.Components = []string{}
	if im := e.impactSrc(); im != nil {
		window, recent := im.src.Windows()
		out.Impact.Available = true
		out.Impact.Components = []string{im.id.String()}
		out.Impact.WindowHours, out.Impact.RecentWindowHours = window.Hours(), recent.Hours()
	} else {
		out.Impact.Message = msgNoProcessor
	}
	return out, nil
}

const (
	msgNoReceiver  = "server status, drift history and accept need an mcpdrift receiver whose control_plane names this extension; none is registered"
	msgNoProcessor = "impact queries need an mcpimpact processor whose control_plane names this extension; none is registered"
)

// drifts returns the registered receivers' views, or 503.
func (e *apiExtension) drifts() ([]driftSource, *apiError) {
	ds := e.driftSources()
	if len(ds) == 0 {
		return nil, newAPIError(http.StatusServiceUnavailable, codeUnavailable, msgNoReceiver)
	}
	return ds, nil
}

func (e *apiExtension) listServers(r *http.Request) (any, *apiError) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return nil, err
	}
	ds, err := e.drifts()
	if err != nil {
		return nil, err
	}
	out := apiwire.ServerList{Servers: []apiwire.ServerStatus{}}
	for _, d := range ds {
		out.Servers = append(out.Servers, d.src.Servers()...)
	}
	slices.SortFunc(out.Servers, func(a, b apiwire.ServerStatus) int { return strings.Compare(a.Name, b.Name) })
	for i := range out.Servers {
		e.addVariantImpact(r.Context(), &out.Servers[i])
	}
	for _, s := range out.Servers {
		out.Summary.Total++
		switch s.Status {
		case apiwire.StatusUp:
			out.Summary.Up++
		case apiwire.StatusDrifted:
			out.Summary.Drifted++
		case apiwire.StatusDown:
			out.Summary.Down++
		case apiwire.StatusPending:
			out.Summary.Pending++
		}
	}
	return out, nil
}

func (e *apiExtension) getServer(r *http.Request) (any, *apiError) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	out, apiErr := firstOf(e, func(s controlplane.DriftSource) (apiwire.ServerDetail, error) { return s.Server(name) }, name)
	if apiErr != nil {
		return nil, apiErr
	}
	d := out.(apiwire.ServerDetail)
	e.addVariantImpact(r.Context(), &d.ServerStatus)
	return d, nil
}

// addVariantImpact asks the processor who each variant of a mixed fleet
// affects (MixedVariant.Impact), all variants in one query. Without a
// processor, or one with no snapshot of the server yet, the variants stay
// without: the status is still the receiver's to give.
func (e *apiExtension) addVariantImpact(ctx context.Context, s *apiwire.ServerStatus) {
	im := e.impactSrc()
	if im == nil || !s.Mixed {
		return
	}
	s.Variants = slices.Clone(s.Variants) // written below: never the view's own
	q, asked := variantQuery(s.Name, s.Variants, nil)
	imps, ok := e.variantImpacts(ctx, im, q)
	if !ok {
		return
	}
	for j, i := range asked {
		s.Variants[i].Impact = &imps[j]
	}
}

// variantImpacts asks the processor q; false, logged, when it failed (an
// unknown server, quietly: no snapshot of it has reached the processor).
func (e *apiExtension) variantImpacts(ctx context.Context, im *impactSource, q controlplane.VariantQuery) ([]apiwire.VariantImpact, bool) {
	if len(q.Variants) == 0 {
		return nil, false
	}
	imps, err := im.src.VariantImpacts(ctx, q)
	if err == nil && len(imps) != len(q.Variants) {
		err = fmt.Errorf("%d answers to %d variants", len(imps), len(q.Variants))
	}
	if err != nil {
		if !errors.Is(err, controlplane.ErrUnknownServer) {
			e.set.Logger.Warn("mcpdrift_api: the variant impact view failed", zap.String("server", q.Server), zap.Error(err))
		}
		return nil, false
	}
	return imps, true
}

func (e *apiExtension) listDrifts(r *http.Request) (any, *apiError) {
	q := r.URL.Query()
	if err := onlyParams(q, "limit", "before"); err != nil {
		return nil, err
	}
	limit := defaultDriftLimit
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > maxDriftLimit {
			return nil, badParameter("limit", fmt.Sprintf("limit must be an integer from 1 to %d, not %s", maxDriftLimit, echo(v[0])))
		}
		limit = n
	}
	query := controlplane.DriftQuery{Limit: limit, Before: q.Get("before")}
	if _, ok := q["before"]; ok && query.Before == "" {
		return nil, badParameter("before", "before must be a drift id: the previous page's next")
	}
	name := r.PathValue("name")
	unknownCursor := false
	out, apiErr := firstOf(e, func(s controlplane.DriftSource) (apiwire.DriftPage, error) {
		p, err := s.Drifts(name, query)
		if errors.Is(err, controlplane.ErrUnknownDrift) {
			unknownCursor = true
			return p, nil
		}
		return p, err
	}, name)
	if unknownCursor {
		return nil, badParameter("before", "no drift "+echo(query.Before)+" in the history of "+echo(name)+
			": it was evicted (the history keeps the newest drifts; nothing older is left) or never was")
	}
	return out, apiErr
}

func (e *apiExtension) getDrift(r *http.Request) (any, *apiError) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return nil, err
	}
	ds, apiErr := e.drifts()
	if apiErr != nil {
		return nil, apiErr
	}
	id := r.PathValue("id")
	for _, d := range ds {
		out, err := d.src.Drift(id)
		if errors.Is(err, controlplane.ErrUnknownDrift) {
			continue
		}
		if err != nil {
			return nil, e.internal(err)
		}
		if out.NextStep, err = e.nextStep(r.Context(), &out); err != nil {
			return nil, e.internal(err)
		}
		return out, nil
	}
	return nil, newAPIError(http.StatusNotFound, codeUnknownDrift, "no drift with id "+echo(id)+" in the history")
}

// toolQuery checks the parameters of a query about one tool of the
// processor's (tool, and the route's other one) and finds the processor.
func (e *apiExtension) toolQuery(q url.Values, other, what string) (*impactSource, string, *apiError) {
	if err := onlyParams(q, "tool", other); err != nil {
		return nil, "", err
	}
	im := e.impactSrc()
	if im == nil {
		return nil, "", newAPIError(http.StatusServiceUnavailable, codeUnavailable, msgNoProcessor)
	}
	tool := q.Get("tool")
	if tool == "" {
		return nil, "", badParameter("tool", "tool is required: the name of the tool whose "+what)
	}
	return im, tool, nil
}

func (e *apiExtension) getImpact(r *http.Request) (any, *apiError) {
	q := r.URL.Query()
	im, tool, apiErr := e.toolQuery(q, "hours", "callers to list")
	if apiErr != nil {
		return nil, apiErr
	}
	window, _ := im.src.Windows()
	hours := window.Hours()
	if v, ok := q["hours"]; ok {
		h, err := strconv.ParseFloat(v[0], 64)
		// Compared in hours (a huge value would overflow a Duration), with a
		// millisecond of slack: the window printed in hours may round.
		if err != nil || math.IsNaN(h) || h <= 0 || h > (window+time.Millisecond).Hours() {
			return nil, badParameter("hours", fmt.Sprintf("hours must be a number greater than 0 and at most %s (the mcpimpact processor's window), not %s",
				strconv.FormatFloat(window.Hours(), 'f', -1, 64), echo(v[0])))
		}
		hours = h
	}
	name := r.PathValue("name")
	d := min(time.Duration(hours*float64(time.Hour)), window)
	out, err := im.src.Impact(r.Context(), controlplane.ImpactQuery{Server: name, Tool: tool, Window: d})
	if apiErr := e.viewError(err, im, name, tool); apiErr != nil {
		return nil, apiErr
	}
	out.Hours = hours
	out.Variants = e.impactVariants(r.Context(), im, name, tool, d)
	return out, nil
}

// variantQuery asks about each variant of a mixed fleet other than the
// baseline that has changes (those keep keeps, all with a nil keep);
// asked are the indexes in vs of the variants asked about, in order.
func variantQuery(server string, vs []apiwire.MixedVariant, keep func(contract.Change) bool) (q controlplane.VariantQuery, asked []int) {
	q.Server = server
	for i, v := range vs {
		if v.Baseline {
			q.Baseline = v.ToolDigests
			continue
		}
		changes := v.Changes
		if keep != nil {
			changes = slices.DeleteFunc(slices.Clone(changes), func(c contract.Change) bool { return !keep(c) })
		}
		if len(changes) == 0 {
			continue
		}
		q.Variants = append(q.Variants, controlplane.Variant{Changes: changes, ToolDigests: v.ToolDigests})
		asked = append(asked, i)
	}
	return q, asked
}

// impactVariants lists the variants of the server's mixed fleet that change
// tool at warning or breaking, with who each affects within window (the
// variant impact of the server's status, for this tool); nil when the
// server is not mixed.
func (e *apiExtension) impactVariants(ctx context.Context, im *impactSource, name, tool string, window time.Duration) []apiwire.ImpactVariant {
	var status *apiwire.ServerStatus
	for _, d := range e.driftSources() {
		if detail, err := d.src.Server(name); err == nil {
			status = &detail.ServerStatus
			break
		}
	}
	if status == nil || !status.Mixed {
		return nil
	}
	q, asked := variantQuery(name, status.Variants, func(c contract.Change) bool {
		return c.Subject == contract.KindTool && c.Name == tool
	})
	q.Window = window
	imps, _ := e.variantImpacts(ctx, im, q)
	var out []apiwire.ImpactVariant
	for j, imp := range imps {
		if len(imp.Tools) == 0 {
			continue // the tool's changes are compatible or info: nobody is hurt
		}
		v := status.Variants[asked[j]]
		out = append(out, apiwire.ImpactVariant{Digest: v.Digest, Share: v.Share, Impact: imp})
	}
	return out
}

const defaultDigestUsageDays = 7

// getDigestUsage answers calls of a tool by definition digest and day.
func (e *apiExtension) getDigestUsage(r *http.Request) (any, *apiError) {
	q := r.URL.Query()
	im, tool, apiErr := e.toolQuery(q, "days", "calls to count")
	if apiErr != nil {
		return nil, apiErr
	}
	days := defaultDigestUsageDays
	if v, ok := q["days"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > apiwire.MaxDigestUsageDays {
			return nil, badParameter("days", fmt.Sprintf("days must be an integer from 1 to %d, not %s", apiwire.MaxDigestUsageDays, echo(v[0])))
		}
		days = n
	}
	name := r.PathValue("name")
	out, err := im.src.DigestUsage(r.Context(), controlplane.DigestUsageQuery{Server: name, Tool: tool, Days: days})
	if apiErr := e.viewError(err, im, name, tool); apiErr != nil {
		return nil, apiErr
	}
	return out, nil
}

// viewError maps the processor view's errors to API errors; nil for nil.
func (e *apiExtension) viewError(err error, im *impactSource, name, tool string) *apiError {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, controlplane.ErrUnknownServer):
		if e.probed(name) {
			return newAPIError(http.StatusNotFound, codeUnknownServer,
				fmt.Sprintf("%s is probed, but no snapshot of it has reached the mcpimpact processor %s yet", echo(name), im.id))
		}
		return unknownServer(name)
	case errors.Is(err, controlplane.ErrUnknownTool):
		return newAPIError(http.StatusNotFound, codeUnknownTool,
			fmt.Sprintf("server %s never listed a tool %s and nobody called one in the window", echo(name), echo(tool)))
	}
	return e.internal(err)
}

// probed reports whether a registered receiver probes the server.
func (e *apiExtension) probed(name string) bool {
	for _, d := range e.driftSources() {
		if _, err := d.src.Server(name); err == nil {
			return true
		}
	}
	return false
}

// firstOf asks each receiver's view in turn for a server's data; the first
// that knows the server answers.
func firstOf[T any](e *apiExtension, get func(controlplane.DriftSource) (T, error), name string) (any, *apiError) {
	ds, apiErr := e.drifts()
	if apiErr != nil {
		return nil, apiErr
	}
	for _, d := range ds {
		out, err := get(d.src)
		if errors.Is(err, controlplane.ErrUnknownServer) {
			continue
		}
		if err != nil {
			return nil, e.internal(err)
		}
		return out, nil
	}
	return nil, unknownServer(name)
}

func unknownServer(name string) *apiError {
	return newAPIError(http.StatusNotFound, codeUnknownServer, "no server named "+echo(name)+" (GET /api/v1/servers lists them)")
}

// internal logs an unexpected view error and answers 500 without it: a
// view's error text is no API.
func (e *apiExtension) internal(err error) *apiError {
	e.set.Logger.Warn("mcpdrift_api: a view failed", zap.Error(err))
	return newAPIError(http.StatusInternalServerError, codeInternal, "internal error; the Collector's log has the details")
}

// onlyParams refuses query parameters a route does not take, and repeated
// ones: a typo (tool_name=) must not silently widen a query.
func onlyParams(q url.Values, allowed ...string) *apiError {
	for k, v := range q {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return badParameter(k, "unknown parameter "+echo(k)+": this route takes none")
			}
			return badParameter(k, "unknown parameter "+echo(k)+": this route takes "+strings.Join(allowed, ", "))
		}
		if len(v) > 1 {
			return badParameter(k, fmt.Sprintf("parameter %s is given %d times", echo(k), len(v)))
		}
	}
	return nil
}
