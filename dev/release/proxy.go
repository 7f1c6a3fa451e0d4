package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// writeModule adds version of the module in dir to the module proxy in
// proxyDir ($GOPROXY/<path>/@v/…, the layout `go help goproxy` describes):
// its go.mod, its zip (made as the go command makes one, without nested
// modules) and its info.
func writeModule(proxyDir, path, version, dir string, at time.Time) error {
	esc, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	escVer, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	vdir := filepath.Join(proxyDir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, escVer+".mod"), gomod, 0o644); err != nil {
		return err
	}
	zf, err := os.Create(filepath.Join(vdir, escVer+".zip"))
	if err != nil {
		return err
	}
	if err := modzip.CreateFromDir(zf, module.Version{Path: path, Version: version}, dir); err != nil {
		zf.Close()
		return err
	}
	if err := zf.Close(); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, at.UTC()})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, escVer+".info"), info, 0o644); err != nil {
		return err
	}
	return addToList(filepath.Join(vdir, "list"), version)
}

// addToList keeps @v/list, the proxy's list of versions, sorted and unique.
func addToList(list, version string) error {
	data, err := os.ReadFile(list)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	versions := strings.Fields(string(data))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	if err := os.WriteFile(list, []byte(strings.Join(versions, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", list, err)
	}
	return nil
}
