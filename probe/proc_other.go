//go:build !unix

package probe

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// signalGroup kills the child; without process groups there is no gentler
// signal to send first.
func signalGroup(cmd *exec.Cmd, _ bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func sweepGroup(*exec.Cmd) {}
