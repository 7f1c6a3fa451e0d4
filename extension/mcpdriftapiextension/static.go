package mcpdriftapiextension

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// The dashboard: every file under dashboard/ is compiled into the Collector
// and served at / (index.html for /). It talks to the API only (same
// origin, /api/v1/...), so it works offline and behind the same TLS; the
// Content-Security-Policy below makes the browser refuse anything else:
// scripts, styles, images and fetches come from this origin, never inline
// and never from a CDN.
//
//go:embed dashboard
var dashboardFiles embed.FS

// dashboardCSP is sent with every static file.
const dashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// staticHandler serves the embedded dashboard.
func staticHandler() http.Handler {
	sub, err := fs.Sub(dashboardFiles, "dashboard")
	if err != nil { // only if the embed directive and the name disagree
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", dashboardCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		// Embedded files carry no modification time, so nothing would
		// revalidate them: after an upgrade a browser must not run the
		// old scripts against the new API.
		h.Set("Cache-Control", "no-cache")
		// A directory other than / would be listed: the file names are no
		// secret, but a listing is no page of the dashboard either.
		if name := strings.Trim(path.Clean(r.URL.Path), "/"); name != "" {
			if st, err := fs.Stat(sub, name); err == nil && st.IsDir() {
				http.NotFound(w, r)
				return
			}
		}
		files.ServeHTTP(w, r)
	})
}
