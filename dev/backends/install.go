package backends

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnsurePrometheus returns the paths of prometheus and promtool, running
// scripts/backends/install.sh (apt, needs root) under root when either is
// missing.
func EnsurePrometheus(ctx context.Context, root string) (prometheus, promtool string, err error) {
	look := func() error {
		if prometheus, err = exec.LookPath("prometheus"); err == nil {
			promtool, err = exec.LookPath("promtool")
		}
		return err
	}
	if look() == nil {
		return prometheus, promtool, nil
	}
	if os.Geteuid() != 0 {
		return "", "", fmt.Errorf("prometheus/promtool not installed and not root: run scripts/backends/install.sh as root")
	}
	if out, err := run(ctx, root, filepath.Join(root, "scripts/backends/install.sh")); err != nil {
		return "", "", fmt.Errorf("scripts/backends/install.sh: %w\n%s", err, out)
	}
	return prometheus, promtool, look()
}

// EnsureJaeger returns the path of _build/jaeger under root, building it
// with scripts/backends/build-jaeger.sh when it is missing or older than
// tools/jaeger/go.mod (the pinned version).
func EnsureJaeger(ctx context.Context, root string) (string, error) {
	bin := filepath.Join(root, "_build", "jaeger")
	if upToDate(bin, filepath.Join(root, "tools", "jaeger", "go.mod")) {
		return bin, nil
	}
	if out, err := run(ctx, root, filepath.Join(root, "scripts/backends/build-jaeger.sh"), bin); err != nil {
		return "", fmt.Errorf("scripts/backends/build-jaeger.sh: %w\n%s", err, out)
	}
	return bin, nil
}

func upToDate(target, source string) bool {
	t, err := os.Stat(target)
	if err != nil {
		return false
	}
	s, err := os.Stat(source)
	return err == nil && !t.ModTime().Before(s.ModTime())
}

func run(ctx context.Context, dir, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}
