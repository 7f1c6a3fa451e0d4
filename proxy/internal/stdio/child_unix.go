//go:build unix && !linux

package stdio

import "syscall"

// childAttr puts the server in a process group of its own (only Linux can
// also have it killed when the proxy dies: see child_linux.go).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
