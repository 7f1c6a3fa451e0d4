package stdio

import "syscall"

// childAttr puts the server in a process group of its own and has the
// kernel kill it if the proxy dies first (a host that SIGKILLs the proxy
// cannot leave a server that ignores the end of its input running).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
