package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// versionFile holds the commit a release was cut from (internal/version).
const versionFile = "internal/version/release_commit.txt"

// Options of a release.
type Options struct {
	// Repo is a clean git checkout (a scratch clone): the release commit
	// and the tags are made in it, on a detached HEAD.
	Repo string
	// Version is the release, a canonical semantic version below v2
	// ("v0.1.0").
	Version string
	// Proxy is the directory the modules are written to, laid out as a Go
	// module proxy.
	Proxy string
	// Env is the environment of the go commands (os.Environ() if nil).
	Env []string
	// ModCache is the module cache of the go commands; empty: a temporary
	// one, removed after. It may be the user's only for a version no other
	// cut makes (see goEnv): the offline release test cuts a prerelease of
	// its own and passes the user's, where third-party modules are already
	// extracted.
	ModCache string
	// Log receives progress lines (nothing if nil).
	Log io.Writer
}

// Result of a release.
type Result struct {
	Source  string   // the commit the release was cut from
	Commit  string   // the release commit, which every tag names
	Tags    []string // one per module
	Modules []string // module paths, in the order they were released
}

// Cut makes the release commit on top of the checkout's HEAD and tags it for
// every module: each module requires its siblings at o.Version and replaces
// none of them, its go.sum names their hashes (go mod tidy against the
// modules released before it), and internal/version records the source
// commit. Every module is written to o.Proxy as it is released.
//
// The development branch keeps its replaces (make and CI build each module
// on its own go.mod from the checkout, GOWORK=off): the release commit is
// reachable from its tags only.
func Cut(ctx context.Context, o Options) (*Result, error) {
	if !semver.IsValid(o.Version) || semver.Canonical(o.Version) != o.Version || semver.Build(o.Version) != "" {
		return nil, fmt.Errorf("version %q: want a canonical semantic version such as v0.1.0", o.Version)
	}
	if m := semver.Major(o.Version); m != "v0" && m != "v1" {
		return nil, fmt.Errorf("version %s: a %s release needs /%s module paths", o.Version, m, m)
	}
	if o.Proxy == "" || !filepath.IsAbs(o.Proxy) {
		return nil, fmt.Errorf("proxy directory %q: want an absolute path", o.Proxy)
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	g := gitIn(ctx, o.Repo)
	if status, err := g("status", "--porcelain", "--untracked-files=all"); err != nil {
		return nil, err
	} else if status != "" {
		// A module zip holds every file of the directory, tracked or not.
		return nil, fmt.Errorf("%s has uncommitted or untracked files; cut a release from a clean clone:\n%s", o.Repo, status)
	}
	source, err := g("rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	when, err := g("show", "-s", "--format=%cI", "HEAD")
	if err != nil {
		return nil, err
	}
	at, err := time.Parse(time.RFC3339, when)
	if err != nil {
		return nil, fmt.Errorf("commit time %q: %w", when, err)
	}
	mods, err := findModules(o.Repo)
	if err != nil {
		return nil, err
	}
	res := &Result{Source: source}
	for _, m := range mods {
		tag := m.Tag(o.Version)
		if _, err := g("rev-parse", "-q", "--verify", "refs/tags/"+tag); err == nil {
			return nil, fmt.Errorf("tag %s already exists", tag)
		}
		res.Tags = append(res.Tags, tag)
		res.Modules = append(res.Modules, m.Path)
	}
	if err := os.WriteFile(filepath.Join(o.Repo, versionFile), []byte(source+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("recording the source commit: %w", err)
	}

	env, cleanup, err := goEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	for _, m := range mods {
		fmt.Fprintf(logw, "release %s %s\n", m.Path, o.Version)
		if err := pinSiblings(m, o.Version); err != nil {
			return nil, err
		}
		dir := filepath.Join(o.Repo, m.Dir)
		data, err := m.File.Format()
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), data, 0o644); err != nil {
			return nil, err
		}
		if len(m.Siblings) > 0 {
			if err := runGo(ctx, dir, env, "mod", "tidy"); err != nil {
				return nil, fmt.Errorf("%s: %w", m.Dir, err)
			}
		}
		if err := writeModule(o.Proxy, m.Path, o.Version, dir, at); err != nil {
			return nil, fmt.Errorf("%s: writing the proxy: %w", m.Dir, err)
		}
	}

	if _, err := g("add", "-A"); err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("Release %s\n\nEvery module requires its siblings at %s with no replace; cut from %s.", o.Version, o.Version, source)
	if _, err := g("commit", "-q", "-m", msg); err != nil {
		return nil, err
	}
	if res.Commit, err = g("rev-parse", "HEAD"); err != nil {
		return nil, err
	}
	for _, tag := range res.Tags {
		if _, err := g("tag", "-a", "-m", "mcpdrift "+o.Version, tag, res.Commit); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(logw, "release commit %s (from %s), %d tags\n", res.Commit, source, len(res.Tags))
	return res, nil
}

// pinSiblings makes m require every sibling it requires at version, with
// no replace for them (a replace of anything else stays).
func pinSiblings(m *repoModule, version string) error {
	for _, r := range slices.Clone(m.File.Require) {
		if isOurs(r.Mod.Path) {
			if err := m.File.AddRequire(r.Mod.Path, version); err != nil {
				return err
			}
		}
	}
	for _, r := range slices.Clone(m.File.Replace) {
		if isOurs(r.Old.Path) {
			if err := m.File.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return err
			}
		}
	}
	m.File.Cleanup()
	// The comment above the dropped replace block stays with nothing under it.
	for _, s := range m.File.Syntax.Stmt {
		if c, ok := s.(*modfile.CommentBlock); ok && slices.ContainsFunc(c.Before, func(c modfile.Comment) bool {
			return strings.Contains(c.Token, "repository's other modules")
		}) {
			m.File.Syntax.Stmt = slices.DeleteFunc(m.File.Syntax.Stmt, func(x modfile.Expr) bool { return x == s })
			break
		}
	}
	return nil
}

// goEnv is the environment for go mod tidy during a release: the modules
// already released come from the proxy being written, checksums of our
// modules are not looked up (they are not public yet), and a module cache of
// its own keeps these versions out of the user's cache, where a later
// release at the same version would find them stale. Third-party modules
// come from the user's module cache, then the usual proxy.
func goEnv(ctx context.Context, o Options) ([]string, func(), error) {
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	out, err := goOutput(ctx, o.Repo, env, "env", "GOMODCACHE", "GOPROXY", "GOFLAGS")
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 3 {
		return nil, nil, fmt.Errorf("go env printed %q", out)
	}
	cache, cleanup := o.ModCache, func() {}
	if cache == "" {
		if cache, err = os.MkdirTemp("", "mcpdrift-release-modcache-"); err != nil {
			return nil, nil, err
		}
		cleanup = func() { _ = os.RemoveAll(cache) }
	}
	env = slices.Clone(env)
	env = append(env, "GOWORK=off", "GOMODCACHE="+cache,
		"GOPROXY="+ProxyChain(o.Proxy, lines[0], lines[1]),
		"GONOSUMDB="+RootModule, "GOFLAGS="+strings.TrimSpace(lines[2]+" -modcacherw"))
	return env, cleanup, nil
}

// ProxyChain is a GOPROXY that serves our modules from the proxy directory,
// then third-party modules from the module cache's downloads (a proxy in
// the same layout), then from the usual GOPROXY.
func ProxyChain(proxyDir, modCache, usual string) string {
	return "file://" + filepath.ToSlash(proxyDir) + ",file://" + filepath.ToSlash(filepath.Join(modCache, "cache", "download")) + "," + usual
}

func gitIn(ctx context.Context, dir string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
}

func runGo(ctx context.Context, dir string, env []string, args ...string) error {
	_, err := goOutput(ctx, dir, env, args...)
	return err
}

func goOutput(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
