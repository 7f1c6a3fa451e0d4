//go:build unix && !linux

package proctree

import "syscall"

// startAttr has the root lead a process group of its own. Only Linux can
// also have it killed when its starter dies (start_linux.go).
func startAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
