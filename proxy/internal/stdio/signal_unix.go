//go:build unix

package stdio

import "syscall"

// signal sends sig to the child's process group.
func (c *child) signal(sig syscall.Signal) {
	_ = syscall.Kill(-c.cmd.Process.Pid, sig)
}
