//go:build unix

package proctree

import (
	"os"
	"syscall"
)

// sysTree is the root's process group, whose id is the root's pid
// (startAttr has it lead a group of its own): nothing to keep.
type sysTree struct{}

func (sysTree) adopt(*os.Process) error { return nil }

// signal sends sig to the root's group, or to the root should the group
// refuse it.
func (sysTree) signal(root *os.Process, sig syscall.Signal) {
	if err := syscall.Kill(-root.Pid, sig); err != nil {
		_ = root.Signal(sig)
	}
}
