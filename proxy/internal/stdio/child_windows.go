package stdio

import "syscall"

// childAttr starts the server in a process group of its own, so that a
// Ctrl+C at the proxy's console is the proxy's to relay, not the server's.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signal ends the child: Windows delivers no SIGTERM to another process, so
// every signal the proxy relays or sends on shutdown terminates it (after
// the end of its input, the MCP stdio transport's own way to ask, and its
// grace period). Processes the server started itself are not reached.
func (c *child) signal(syscall.Signal) {
	_ = c.cmd.Process.Kill()
}
