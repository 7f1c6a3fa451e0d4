//go:build unix

package stdio

import (
	"os/exec"
	"syscall"
)

// tree is the child and what it starts: its process group (childAttr),
// whose id is the child's pid.
type tree struct{ pgid int }

// adopt names the started child's group.
func adopt(cmd *exec.Cmd) (*tree, error) { return &tree{pgid: cmd.Process.Pid}, nil }

// signal sends sig to the child's process group.
func (c *child) signal(sig syscall.Signal) {
	_ = syscall.Kill(-c.tree.pgid, sig)
}
