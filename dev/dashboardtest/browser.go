// Package dashboardtest drives the mcpdrift dashboard in a real headless
// Chromium (Debian's chromium package, which .ci/run installs) over the
// DevTools protocol, and reads what it rendered: the extension's browser
// test (against example data) and the end-to-end test (against the running
// distribution) assert the same DOM through it.
package dashboardtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// The window: wide enough for the drift tab's two columns.
const windowWidth, windowHeight = 1400, 900

// Chromium returns the browser to run: $MCPDRIFT_CHROMIUM, else chromium
// on PATH. Without one the test skips loudly, and fails under CI (which
// must install it).
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MCPDRIFT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const why = "chromium is not installed, so the dashboard was not tested in a browser; install it with scripts/backends/install.sh (apt-get install chromium)"
	testservers.SkipLoudly(t, why) // a failure under CI
	return ""
}

// Browser is one headless Chromium with one tab. Everything the page
// writes to the console is kept: a dashboard that throws, or that the
// Content-Security-Policy refuses, has a bug (see Problems).
type Browser struct {
	t   testing.TB
	ctx context.Context
	// width and height are the viewport's (Viewport changes them).
	width, height int64

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// Open opens a tab with a 1400×900 window in a browser context of its own
// (its own cookies and storage, as a fresh profile has), in the Chromium the
// test process shares; it is closed when the test ends.
func Open(t testing.TB) *Browser {
	t.Helper()
	root, err := acquire(Chromium(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(func() {
		stop() // closes the tab and disposes of its browser context
		release()
	})
	b := &Browser{t: t, ctx: ctx, width: windowWidth, height: windowHeight}
	if err := chromedp.Do(ctx); err != nil { // open the tab without a deadline (see chromedp.Run)
		t.Fatalf("opening a tab: %v", err)
	}
	// A new browser context's window takes --window-size, as the first did.
	var size [2]int64
	if b.Eval(`[outerWidth, outerHeight]`, &size); size != [2]int64{windowWidth, windowHeight} {
		t.Fatalf("the tab's window is %d×%d, want %d×%d", size[0], size[1], windowWidth, windowHeight)
	}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// browser is the Chromium the open Browsers share: started by the first
// Open, stopped when the last one is closed (so that nothing outlives the
// tests, which goleak checks). Starting one per test cost about 1.5 CPU-s
// each, a dozen times per run of the extension's tests.
var browser struct {
	mu    sync.Mutex
	users int
	ctx   context.Context // its first tab; a Browser's tab is a child of it
	stop  func()          // stops Chromium and removes its profile
}

// acquire returns the shared Chromium (bin), starting it if none runs.
func acquire(bin string) (context.Context, error) {
	browser.mu.Lock()
	defer browser.mu.Unlock()
	if browser.users == 0 {
		profile, err := os.MkdirTemp("", "dashboardtest-chromium-")
		if err != nil {
			return nil, err
		}
		// Without the background-networking flags Chromium reaches for
		// Google services, which a closed network refuses (slowly).
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(bin),
			chromedp.NoSandbox, // root in CI containers
			chromedp.DisableGPU,
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("hide-scrollbars", true),
			chromedp.UserDataDir(profile),
			chromedp.WindowSize(windowWidth, windowHeight),
		)
		alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, stopFirst := chromedp.NewContext(alloc)
		stop := func() {
			stopFirst()
			stopAlloc() // waits for the browser process to exit
			_ = os.RemoveAll(profile)
		}
		if err := chromedp.Do(ctx); err != nil { // start it without a deadline (see chromedp.Run)
			stop()
			return nil, fmt.Errorf("starting %s: %v", bin, err)
		}
		browser.ctx, browser.stop = ctx, stop
	}
	browser.users++
	return browser.ctx, nil
}

// release stops the shared Chromium if no Browser uses it any more.
func release() {
	browser.mu.Lock()
	defer browser.mu.Unlock()
	if browser.users--; browser.users == 0 {
		browser.stop()
		browser.ctx, browser.stop = nil, nil
	}
}

// Viewport sizes the page's viewport, in CSS pixels (a phone: 390×844),
// for what is loaded and shot from now on.
func (b *Browser) Viewport(width, height int64) {
	b.t.Helper()
	b.width, b.height = width, height
	b.Do(chromedp.EmulateViewport(width, height))
}

// Rect is an element's box in CSS pixels, relative to the top left of the
// page (not of the viewport): Y is how far down the page it starts.
type Rect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Right is where the box ends on the x axis.
func (r Rect) Right() float64 { return r.X + r.Width }

// Bottom is where the box ends on the y axis.
func (r Rect) Bottom() float64 { return r.Y + r.Height }

// Box returns the box of the first element matching a CSS selector,
// failing the test when none does.
func (b *Browser) Box(selector string) Rect {
	b.t.Helper()
	var r *Rect
	b.Eval(`(() => { const n = document.querySelector(`+jsString(selector)+`); if (!n) return null;
  const r = n.getBoundingClientRect(); return { x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height }; })()`, &r)
	if r == nil {
		b.t.Fatalf("browser: no element matches %s", selector)
	}
	return *r
}

// step returns the context of a browser step (a load, a click, a wait):
// the tab's, until testservers.WaitDeadline. A fixed bound per step (60 s)
// failed under load, where a niced Chromium took longer than that to render
// a page.
func (b *Browser) step() (context.Context, context.CancelFunc) {
	if d, ok := testservers.WaitDeadline(b.t); ok {
		return context.WithDeadline(b.ctx, d)
	}
	return context.WithCancel(b.ctx)
}

// Do runs browser steps, failing the test on error.
func (b *Browser) Do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v%s", err, b.consoleTail())
	}
}

// Eval evaluates a JavaScript expression (awaiting a promise) and decodes
// its value into out (nil: ignore it).
func (b *Browser) Eval(expr string, out any) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("browser: evaluating %.60q: %v%s", expr, err, b.consoleTail())
	}
	if out != nil {
		if len(v) == 0 { // undefined
			v = []byte("null")
		}
		if err := json.Unmarshal(v, out); err != nil {
			b.t.Fatalf("browser: decoding %.60q: %v (%s)", expr, err, v)
		}
	}
}

// BypassCSP turns the page's Content-Security-Policy off (for pages loaded
// from now on): a test that must show the dashboard escapes server text by
// itself, not only because the policy refuses inline scripts, runs with it.
func (b *Browser) BypassCSP() {
	b.t.Helper()
	b.Do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true})
		return err
	}))
}

// Load opens url in a fresh document and waits until the dashboard has
// rendered its route, with everything it loads for it.
func (b *Browser) Load(url string) {
	b.t.Helper()
	b.Do(chromedp.Navigate("about:blank"), chromedp.Navigate(url))
	route := "#/"
	if i := strings.IndexByte(url, '#'); i >= 0 && len(url) > i+1 {
		route = url[i:]
	}
	b.WaitReady(route)
}

// Go switches the dashboard to a route (#/servers/demo-tools) as a link
// would, and waits until it has rendered.
func (b *Browser) Go(route string) {
	b.t.Helper()
	b.Rerender(route, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[chromedp.Void]("location.hash = "+jsString(route))(ctx, t)
		return err
	}))
}

// Rerender runs steps that make the dashboard render again (a click on a
// link, a form that reloads the view) and waits until it shows route.
func (b *Browser) Rerender(route string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.Eval(`document.querySelector('main').dataset.ready = 'stale'`, nil)
	b.Do(steps...)
	b.WaitReady(route)
}

// WaitReady waits until the dashboard shows route with everything it
// loads for it (main[data-ready=true] for that route; app.js sets both).
func (b *Browser) WaitReady(route string) {
	b.t.Helper()
	b.WaitFor(`(() => { const m = document.querySelector('main'); return !!m && m.dataset.ready === 'true' && m.dataset.route === ` +
		jsString(route) + `; })()`)
}

// WaitFor waits until a JavaScript expression is true, failing the test
// at once when the page throws (a broken page never gets there).
func (b *Browser) WaitFor(expr string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	start := time.Now()
	for {
		var ok bool
		b.Eval(expr, &ok)
		if ok {
			return
		}
		if p := b.exceptions(); len(p) > 0 {
			b.t.Fatalf("browser: the page threw while waiting for %s: %s", expr, strings.Join(p, "; "))
		}
		if ctx.Err() != nil {
			b.t.Fatalf("browser: timed out after %s waiting for %s%s", time.Since(start).Round(time.Second), expr, b.consoleTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Screenshot saves the page as PNG under ArtifactDir with the given name
// and returns the path: the whole page when height is 0, else its top
// height pixels. The viewport is resized to the height for the shot (a
// capture beyond the viewport would paint the sticky top bar mid-page).
func (b *Browser) Screenshot(name string, height int) string {
	b.t.Helper()
	if height == 0 {
		b.Eval(`document.documentElement.scrollHeight`, &height)
	}
	b.Eval(`window.scrollTo(0, 0)`, nil) // the shot starts at the top of the page
	var png []byte
	b.Do(chromedp.EmulateViewport(b.width, int64(height)), chromedp.Func(func(ctx context.Context, t *chromedp.Target) (err error) {
		png, err = chromedp.CaptureScreenshot()(ctx, t)
		return err
	}), chromedp.EmulateViewport(b.width, b.height))
	path := filepath.Join(ArtifactDir(b.t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
	return path
}

// Problems returns what the page reported as errors: uncaught exceptions,
// console errors, and the browser's own error entries (a resource the
// Content-Security-Policy refused, a file that failed to load). An API
// answer with an error status is not one: the dashboard shows those.
func (b *Browser) Problems() []string {
	var out []string
	for _, m := range b.messages(chromedp.ConsoleError, chromedp.ConsoleException) {
		if strings.HasPrefix(m, "error: Failed to load resource: the server responded with a status") && strings.Contains(m, "/api/v1/") {
			continue
		}
		out = append(out, m)
	}
	return out
}

func (b *Browser) exceptions() []string { return b.messages(chromedp.ConsoleException) }

func (b *Browser) messages(types ...chromedp.ConsoleType) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.console {
		if slices.Contains(types, m.Type) {
			out = append(out, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1))
		}
	}
	return out
}

func (b *Browser) consoleTail() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var s strings.Builder
	for _, m := range b.console[max(0, len(b.console)-10):] {
		fmt.Fprintf(&s, "\n  console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1)
	}
	return s.String()
}

// ArtifactDir is where tests keep what a person should look at (the
// screenshots): $MCPDRIFT_ARTIFACTS, else _build/artifacts in the
// repository.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("MCPDRIFT_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(testservers.RepoRoot(), "_build", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
