//go:build e2e

package release_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/release"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// releaseVersion is the version docs/collector.md's manifest names. The
// test cuts a prerelease of it named by the source commit (testVersion), so
// that it can use the module cache everyone uses: every third-party module
// is already extracted there, where a cache of the test's own took 2.3 GB
// of extraction, most of the test's time. A cut of one commit gives the same
// modules byte for byte, so a run never finds different modules under its
// version; and a second run of one commit finds its packages (cached by
// module version under -trimpath) in the build cache. Two runs of one commit
// at once would race on removing the modules at the end.
const releaseVersion = "v0.1.0"

// testVersion is releaseVersion with a prerelease naming the source commit.
func testVersion(source string) string {
	return releaseVersion + "-releasetest.c" + source[:min(12, len(source))]
}

// agentForbidden are module paths an agent that imports the interceptor must
// not have in its build list.
var agentForbidden = regexp.MustCompile(`^(go\.opentelemetry\.io/collector|github\.com/open-telemetry/opentelemetry-collector-contrib)(/|$)|^github\.com/mcpdrift/mcpdrift$`)

// TestReleaseOffline cuts a release in a scratch clone of HEAD, serves it as
// a file-based module proxy, and uses it as users do, from directories outside
// the repository with no workspace and no replace: an agent `go get`s
// interceptor/gosdk, `go install …/cmd/mcpdrift@v0.1.0` works, and ocb builds
// the complete distribution manifest of docs/collector.md (its version of
// mcpdrift replaced by the run's, testVersion). Third-party modules come from
// the module cache, then the usual proxy; our modules are removed from the
// module cache when the test ends.
func TestReleaseOffline(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	repo := testservers.RepoRoot()
	work := t.TempDir()
	began := time.Now()
	step := func(what string, at time.Time) { t.Logf("%-40s %6.1fs", what, time.Since(at).Seconds()) }

	src := filepath.Join(work, "src")
	// --no-tags: a release made here before (make release) must not collide.
	run(t, ctx, repo, nil, "git", "clone", "-q", "--no-tags", "--no-checkout", repo, src)
	run(t, ctx, src, nil, "git", "fetch", "-q", repo, "HEAD")
	run(t, ctx, src, nil, "git", "checkout", "-q", "--detach", "FETCH_HEAD")
	// The release commit and its tags need an identity, which CI may lack:
	// the scratch clone's own, not the process environment, which the
	// tests running beside this one share.
	run(t, ctx, src, nil, "git", "config", "user.name", "mcpdrift release test")
	run(t, ctx, src, nil, "git", "config", "user.email", "release-test@mcpdrift.invalid")
	proxyDir := filepath.Join(work, "proxy")
	version := testVersion(strings.TrimSpace(run(t, ctx, src, nil, "git", "rev-parse", "HEAD")))
	modcache := strings.TrimSpace(run(t, ctx, repo, nil, "go", "env", "GOMODCACHE"))
	t.Cleanup(func() { removeRelease(t, modcache, version) })
	at := time.Now()
	res, err := release.Cut(ctx, release.Options{Repo: src, Version: version, Proxy: proxyDir, ModCache: modcache, Log: tlog{t}})
	if err != nil {
		t.Fatal(err)
	}
	step("cut the release", at)
	for _, tag := range res.Tags {
		if got := strings.TrimSpace(run(t, ctx, src, nil, "git", "rev-parse", tag+"^{commit}")); got != res.Commit {
			t.Errorf("tag %s names %s, want the release commit %s", tag, got, res.Commit)
		}
		dir := strings.TrimSuffix(strings.TrimSuffix(tag, version), "/")
		if dir == "" {
			dir = "."
		}
		if gomod := run(t, ctx, src, nil, "git", "show", tag+":"+filepath.ToSlash(filepath.Join(dir, "go.mod"))); strings.Contains(gomod, "replace github.com/mcpdrift") || regexp.MustCompile(`github\.com/mcpdrift/mcpdrift\S* (v0\.0\.0|=>)`).MatchString(gomod) {
			t.Errorf("%s/go.mod at %s still replaces a sibling or requires it at v0.0.0:\n%s", dir, tag, gomod)
		}
	}

	usual := run(t, ctx, repo, nil, "go", "env", "GOPROXY")
	bin := filepath.Join(work, "bin")
	// The flags of ocb's compile step and of make distro (-trimpath, no
	// cgo): a package's cache key then names its module and version, not
	// the scratch module cache's directory, so the build cache of make
	// distro, or of an earlier run, serves every third-party package.
	// -modcacherw lets the test remove its modules from the module cache.
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -modcacherw -trimpath", "CGO_ENABLED=0",
		"GONOSUMDB="+release.RootModule, "GOBIN="+bin,
		"GOPROXY="+release.ProxyChain(proxyDir, modcache, strings.TrimSpace(usual)))

	t.Run("agent go get", func(t *testing.T) {
		at := time.Now()
		agent := filepath.Join(work, "agent")
		if err := os.MkdirAll(agent, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(agent, "main.go"), `package main

import (
	"fmt"

	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
)

func main() { fmt.Println(gosdk.New().Interceptor() != nil) }
`)
		run(t, ctx, agent, env, "go", "mod", "init", "example.com/agent")
		run(t, ctx, agent, env, "go", "get", release.RootModule+"/interceptor/gosdk@"+version)
		run(t, ctx, agent, env, "go", "build", "-o", filepath.Join(work, "agent-bin"), ".")
		if out := strings.TrimSpace(run(t, ctx, agent, env, filepath.Join(work, "agent-bin"))); out != "true" {
			t.Errorf("the agent printed %q", out)
		}
		list := strings.Fields(run(t, ctx, agent, env, "go", "list", "-m", "-f", "{{.Path}}", "all"))
		for _, m := range list {
			if agentForbidden.MatchString(m) {
				t.Errorf("the agent's build list has %s", m)
			}
		}
		step("agent: go get, build ("+strconv.Itoa(len(list))+" modules)", at)
	})

	t.Run("go install", func(t *testing.T) {
		at := time.Now()
		run(t, ctx, work, env, "go", "install", release.RootModule+"/cmd/mcpdrift@"+version)
		out := run(t, ctx, work, env, filepath.Join(bin, "mcpdrift"), "version")
		if want := "mcpdrift " + version + " (commit " + res.Source + ","; !strings.HasPrefix(out, want) {
			t.Errorf("mcpdrift version printed %q, want it to begin %q", out, want)
		}
		step("go install cmd/mcpdrift@"+version, at)
	})

	t.Run("ocb", func(t *testing.T) {
		at := time.Now()
		builder := filepath.Join(work, "builder")
		run(t, ctx, filepath.Join(repo, "tools"), append(os.Environ(), "GOWORK=off"), "go", "build", "-o", builder, "go.opentelemetry.io/collector/cmd/builder")
		dir := filepath.Join(work, "ocb")
		// docs/collector.md: mkdir -p _build, then builder --config.
		if err := os.MkdirAll(filepath.Join(dir, "_build"), 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := strings.ReplaceAll(docsManifest(t, filepath.Join(repo, "docs", "collector.md")),
			release.RootModule+" "+releaseVersion, release.RootModule+" "+version)
		writeFile(t, filepath.Join(dir, "builder-config.yaml"), manifest)
		run(t, ctx, dir, env, builder, "--config", "builder-config.yaml")
		bin := filepath.Join(dir, "_build", "otelcol-mine", "otelcol-mine")
		comps := run(t, ctx, dir, env, bin, "components")
		for _, c := range []string{"mcpdrift", "mcpimpact", "mcpdrift_api"} {
			if !regexp.MustCompile(`(?m)^\s*-?\s*name: ` + c + `$`).MatchString(comps) {
				t.Errorf("otelcol-mine components lists no %s:\n%s", c, comps)
			}
		}
		built := run(t, ctx, dir, env, "go", "version", "-m", bin)
		if !strings.Contains(built, release.RootModule+"\t"+version) {
			t.Errorf("otelcol-mine is not built from %s %s:\n%s", release.RootModule, version, built)
		}
		step("ocb: the docs' manifest", at)
	})
	step("total", began)
}

// removeRelease removes our modules at version from the module cache:
// the extracted modules (made writable by -modcacherw) and their downloads.
func removeRelease(t *testing.T, modcache, version string) {
	ours := filepath.FromSlash(release.RootModule)
	for _, dir := range []string{filepath.Join(modcache, filepath.Dir(ours)), filepath.Join(modcache, "cache", "download", ours)} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() && strings.HasSuffix(name, "@"+version) && strings.HasPrefix(path, filepath.Join(modcache, ours)) {
				if err := os.RemoveAll(path); err != nil {
					return err
				}
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasPrefix(name, version+".") && filepath.Base(filepath.Dir(path)) == "@v" {
				return os.Remove(path)
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Errorf("removing %s from the module cache: %v", version, err)
		}
	}
}

// docsManifest is the complete ocb manifest of docs/collector.md (the YAML
// block that begins with `dist:`), as a user copies it.
func docsManifest(t *testing.T, doc string) string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(dist:\n.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no ```yaml block that begins with dist:", doc)
	}
	if !strings.Contains(string(m[1]), "github.com/mcpdrift/mcpdrift "+releaseVersion) {
		t.Fatalf("the manifest in %s does not name mcpdrift %s:\n%s", doc, releaseVersion, m[1])
	}
	return string(m[1])
}

func run(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

type tlog struct{ t *testing.T }

func (l tlog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
