//go:build !linux

package proctree

import "os/exec"

// start starts cmd from whichever thread runs the caller: only Linux ties
// a child to the thread that started it.
func start(cmd *exec.Cmd) (release func(), err error) {
	return func() {}, cmd.Start()
}
