package mcpdriftapiextension

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/internal/metadata"
)

// The dashboard's files: each one embedded, served with its type and the
// headers that keep the browser from loading or running anything else.
func TestDashboardFilesServed(t *testing.T) {
	router := newRouter(newAPIExtension(extensiontest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config)), nil)
	types := map[string]string{
		".html": "text/html; charset=utf-8",
		".js":   "text/javascript; charset=utf-8", // module scripts need a JavaScript type
		".css":  "text/css; charset=utf-8",
		".svg":  "image/svg+xml",
	}
	files := dashboardPaths(t)
	if len(files) < 4 {
		t.Fatalf("dashboard files: %v", files)
	}
	for _, name := range append(files, "") { // "" is /
		url := "/" + name
		if name == "index.html" {
			continue // the file server redirects it to /
		}
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", url, rec.Code)
			continue
		}
		ext := path.Ext(name)
		if name == "" {
			ext = ".html"
		}
		want, ok := types[ext]
		if !ok {
			t.Errorf("%s: no content type expected for %q files; add it to the test", name, ext)
		}
		if got := rec.Header().Get("Content-Type"); got != want {
			t.Errorf("GET %s: Content-Type %q, want %q", url, got, want)
		}
		checkStaticHeaders(t, url, rec.Header())
		if got := rec.Header().Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q (an upgraded Collector must not serve yesterday's scripts from cache)", url, got)
		}
	}

	// Not found, and not a method the files take: both refused, both with
	// the policy.
	for _, tc := range []struct {
		method, url string
		code        int
	}{{http.MethodGet, "/nope.js", 404}, {http.MethodPost, "/", 405}, {http.MethodHead, "/style.css", 200}} {
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.url, nil))
		if rec.Code != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.url, rec.Code, tc.code)
		}
		if tc.code != 405 {
			checkStaticHeaders(t, tc.method+" "+tc.url, rec.Header())
		}
	}
}

func checkStaticHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	directives := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	// default-src 'none' (stricter than 'self'), then same origin for each
	// kind the dashboard uses.
	if directives["default-src"] != "'none'" && directives["default-src"] != "'self'" {
		t.Errorf("%s: CSP default-src %q", what, directives["default-src"])
	}
	for _, d := range []string{"script-src", "style-src", "connect-src"} {
		if directives[d] != "'self'" {
			t.Errorf("%s: CSP %s %q, want 'self' only", what, d, directives[d])
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*", "http:", "https:"} {
		if strings.Contains(csp, bad) {
			t.Errorf("%s: CSP allows %s: %q", what, bad, csp)
		}
	}
	if directives["frame-ancestors"] != "'none'" {
		t.Errorf("%s: CSP frame-ancestors %q (the dashboard has an Accept button: no framing)", what, directives["frame-ancestors"])
	}
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q", what, got)
	}
}

// The sources load nothing from elsewhere, write no server text as markup,
// and every file they reference is embedded.
func TestDashboardSources(t *testing.T) {
	files := map[string]string{}
	for _, name := range dashboardPaths(t) {
		b, err := fs.ReadFile(dashboardFiles, "dashboard/"+name)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	external := regexp.MustCompile(`(?i)\b(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	for name, src := range files {
		for _, m := range external.FindAllString(src, -1) {
			if m != "http://www.w3.org" { // an SVG namespace name, not a request
				t.Errorf("%s refers to %s: the dashboard loads nothing from elsewhere", name, m)
			}
		}
	}

	// Server text reaches the page as text nodes only.
	unsafe := regexp.MustCompile(`\.(?:inner|outer)HTML\b|insertAdjacentHTML|document\.write|\beval\(|new Function\(|createContextualFragment|srcdoc`)
	for name, src := range files {
		if strings.HasSuffix(name, ".js") {
			for _, m := range unsafe.FindAllString(src, -1) {
				t.Errorf("%s uses %s: build elements with h() (dom.js), never markup", name, m)
			}
		}
	}

	// index.html: no inline script or style (the CSP would refuse them).
	index := files["index.html"]
	if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|<style|\sstyle=|\son[a-z]+=`).MatchString(index) {
		t.Error("index.html has inline script, style or event handlers")
	}

	// Every reference resolves to an embedded file (or the API, or a route).
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	for _, m := range refs.FindAllStringSubmatch(index, -1) {
		ref := m[1]
		if strings.HasPrefix(ref, "api/v1/") || strings.HasPrefix(ref, "#") {
			continue
		}
		if _, ok := files[ref]; !ok {
			t.Errorf("index.html refers to %s, which is not embedded", ref)
		}
	}
	imports := regexp.MustCompile(`(?m)^import .* from '([^']+)';$`)
	for name, src := range files {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		for _, m := range imports.FindAllStringSubmatch(src, -1) {
			if !strings.HasPrefix(m[1], "./") {
				t.Errorf("%s imports %s: only relative module paths", name, m[1])
			}
			if _, ok := files[path.Join(path.Dir(name), m[1])]; !ok {
				t.Errorf("%s imports %s, which is not embedded", name, m[1])
			}
		}
	}
}

// dashboardPaths lists the embedded files, relative to dashboard/.
func dashboardPaths(t *testing.T) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(dashboardFiles, "dashboard", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, "dashboard/"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
