package dashboardtest

import (
	"strings"
	"testing"
)

// ServerList is what the server list shows.
type ServerList struct {
	Tiles map[string]string `json:"tiles"` // total, down, drifted, pending, up → count
	Rows  []ServerRow       `json:"rows"`  // in display order
}

// ServerRow is one row of the server list.
type ServerRow struct {
	Name   string   `json:"name"`
	Status string   `json:"status"`
	Cells  []string `json:"cells"`
}

// DriftTab is what a server's Drift tab shows.
type DriftTab struct {
	ID       string   `json:"id"`
	State    string   `json:"state"`
	Severity string   `json:"severity"`
	Chips    []string `json:"chips"` // "1 breaking", ...
	Meta     []string `json:"meta"`  // "Detected 3 d ago", "first served 6.1 s before", ...
	Groups   []Group  `json:"groups"`
	History  []string `json:"history"` // drift ids, newest first
}

// Group is a changed item: its change cards, the callers of a changed tool,
// and the full definitions.
type Group struct {
	Subject string  `json:"subject"`
	Name    string  `json:"name"`
	Cards   []Card  `json:"cards"`
	Impact  *Impact `json:"impact"`
	// Compare is the full-definition toggle's label ("" when there is none).
	Compare string `json:"compare"`
}

// Card is one change with its BEFORE / AFTER boxes.
type Card struct {
	Severity    string `json:"severity"`
	Rule        string `json:"rule"`
	Message     string `json:"message"`
	BeforeLabel string `json:"before_label"`
	Before      string `json:"before"`
	AfterLabel  string `json:"after_label"`
	After       string `json:"after"`
}

// Impact is the callers panel of a changed tool.
type Impact struct {
	State string `json:"state"` // loading, agents, no-callers, unavailable, error
	Text  string `json:"text"`
	// Stale is the red number: the stale calls ("" when there are none).
	Stale  string     `json:"stale"`
	Agents []AgentRow `json:"agents"`
}

// AgentRow is one caller: Agent · Sessions · Calls · Errors · Avg latency ·
// Last called · Definition used · Since the change · Risk.
type AgentRow struct {
	Agent  string   `json:"agent"`
	Risk   string   `json:"risk"`
	Stale  string   `json:"stale"`
	Before string   `json:"before"`
	New    string   `json:"new"`
	Cells  []string `json:"cells"`
}

// Group returns the group of a changed item, failing the test when the tab
// has none.
func (d DriftTab) Group(t testing.TB, subject, name string) Group {
	t.Helper()
	for _, g := range d.Groups {
		if g.Subject == subject && g.Name == name {
			return g
		}
	}
	t.Fatalf("the drift tab shows no %s %q (groups: %+v)", subject, name, d.Groups)
	return Group{}
}

// Card returns the group's card of a rule, failing the test when it has
// none.
func (g Group) Card(t testing.TB, rule string) Card {
	t.Helper()
	for _, c := range g.Cards {
		if c.Rule == rule {
			return c
		}
	}
	t.Fatalf("%s %q shows no %s card (cards: %+v)", g.Subject, g.Name, rule, g.Cards)
	return Card{}
}

// Agent returns the impact row of an agent, failing the test when there is
// none.
func (g Group) Agent(t testing.TB, agent string) AgentRow {
	t.Helper()
	if g.Impact != nil {
		for _, a := range g.Impact.Agents {
			if a.Agent == agent {
				return a
			}
		}
	}
	t.Fatalf("%s %q shows no caller %q (impact: %+v)", g.Subject, g.Name, agent, g.Impact)
	return AgentRow{}
}

// ReadServers reads the server list on screen.
func (b *Browser) ReadServers() ServerList {
	b.t.Helper()
	var out ServerList
	b.Eval(readServersJS, &out)
	return out
}

// ReadDrift reads the Drift tab on screen.
func (b *Browser) ReadDrift() DriftTab {
	b.t.Helper()
	var out DriftTab
	b.Eval(readDriftJS, &out)
	return out
}

// PoisonGlobal is what the poisoned descriptions of the tests' servers
// set when run: window.__mcpdriftPoisoned.
const PoisonGlobal = "__mcpdriftPoisoned"

// CheckEscaped fails the test when server text became markup in the page
// (a script, img, iframe, object or embed element: the dashboard creates
// none) or when a poisoned description's code ran (it sets PoisonGlobal).
func (b *Browser) CheckEscaped() {
	b.t.Helper()
	var got struct {
		Elements int `json:"elements"`
		Poisoned any `json:"poisoned"`
	}
	b.Eval(`({ elements: document.querySelectorAll('main script, main img, main iframe, main object, main embed').length, poisoned: window.`+PoisonGlobal+` ?? null })`, &got)
	if got.Elements != 0 {
		b.t.Errorf("%d script/img/iframe/object/embed elements in the page: server text was parsed as markup", got.Elements)
	}
	if got.Poisoned != nil {
		b.t.Errorf("a poisoned description ran: window.%s = %v", PoisonGlobal, got.Poisoned)
	}
}

// CheckConsole fails the test for each problem the page reported (see
// Problems).
func (b *Browser) CheckConsole() {
	b.t.Helper()
	for _, p := range b.Problems() {
		b.t.Errorf("browser console: %s", p)
	}
}

// Text returns the text of the first element matching a CSS selector ("" when
// none does).
func (b *Browser) Text(selector string) string {
	b.t.Helper()
	var s string
	b.Eval(`(() => { const n = document.querySelector(`+jsString(selector)+`); return n ? n.textContent : ''; })()`, &s)
	return strings.TrimSpace(s)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\u2028", `\u2028`, "\u2029", `\u2029`)
	return "'" + r.Replace(s) + "'"
}

const domHelpersJS = `
const all = (sel, root = document) => [...root.querySelectorAll(sel)];
const text = (n) => (n ? n.textContent.replace(/\s+/g, ' ').trim() : '');
`

const readServersJS = `(() => {` + domHelpersJS + `
return {
  tiles: Object.fromEntries(all('[data-summary]').map((t) => [t.dataset.summary, text(t.querySelector('.n'))])),
  rows: all('table.servers tbody tr').map((r) => ({
    name: r.dataset.server,
    status: text(r.querySelector('[data-status]')),
    cells: all('td', r).map(text),
  })),
};
})()`

const readDriftJS = `(() => {` + domHelpersJS + `
const head = document.querySelector('.drift-head');
const box = (card, cls, part) => text(card.querySelector('.' + cls + ' .box-' + part));
return {
  id: head ? head.dataset.drift : '',
  state: head ? head.dataset.state : '',
  severity: head ? text(head.querySelector('.drift-title [data-severity]')) : '',
  chips: all('.summary-chips .chip').map(text),
  meta: all('.drift-meta > span').map(text),
  history: all('.history a[data-drift]').map((a) => a.dataset.drift),
  groups: all('.item-group').map((g) => {
    const impact = g.querySelector('.impact');
    const compare = g.querySelector('[data-action="compare"]');
    return {
      subject: g.dataset.subject,
      name: g.dataset.name,
      compare: compare ? text(compare) : '',
      cards: all('.change-card', g).map((c) => ({
        severity: c.dataset.severity,
        rule: c.dataset.rule,
        message: text(c.querySelector('.change-msg')),
        before_label: box(c, 'box-before', 'label'),
        before: c.querySelector('.box-before .box-value').textContent,
        after_label: box(c, 'box-after', 'label'),
        after: c.querySelector('.box-after .box-value').textContent,
      })),
      impact: impact ? {
        state: impact.dataset.state,
        text: text(impact),
        stale: (impact.querySelector('.impact-totals [data-stale]') || { dataset: { stale: '' } }).dataset.stale,
        agents: all('tr.agent-row', impact).map((r) => {
          const split = r.querySelector('.split');
          return {
            agent: r.dataset.agent,
            risk: r.dataset.risk,
            stale: split ? split.dataset.stale : '',
            before: split ? split.dataset.before : '',
            new: split ? split.dataset.new : '',
            cells: all('td', r).map(text),
          };
        }),
      } : null,
    };
  }),
};
})()`
