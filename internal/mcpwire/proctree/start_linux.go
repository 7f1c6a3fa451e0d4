package proctree

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// startAttr has the root lead a process group of its own, and has the
// kernel kill it when its starter dies: a starter that is SIGKILLed (a
// host ending mcpdrift proxy, an OOM-killed Collector) cannot stop a server
// that ignores the end of its input. Only the root gets the signal; the
// rest of its group sees its input end, as it would without us.
func startAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// The parent-death signal fires when the thread that started the child
// ends, not its process. Go ends a thread when a goroutine locked to it
// (runtime.LockOSThread) exits, and any goroutine in the process, ours or
// a library's, may do so on whichever thread last ran a start. So every
// root is started from one goroutine locked to its thread, which it keeps
// for as long as a root it started is unreaped.
var starter struct {
	mu    sync.Mutex
	live  int         // roots started and not yet reaped
	calls chan func() // to the locked goroutine; nil while live is 0
}

// start runs cmd.Start on the starter's thread, starting the starter if
// no root is live; release, once the root is reaped, lets it end.
func start(cmd *exec.Cmd) (release func(), err error) {
	starter.mu.Lock()
	if starter.live == 0 {
		starter.calls = make(chan func())
		go startLoop(starter.calls)
	}
	starter.live++
	calls := starter.calls
	starter.mu.Unlock()

	started := make(chan error, 1)
	calls <- func() { started <- cmd.Start() }
	if err := <-started; err != nil {
		releaseStarter()
		return nil, err
	}
	return sync.OnceFunc(releaseStarter), nil
}

func releaseStarter() {
	starter.mu.Lock()
	defer starter.mu.Unlock()
	if starter.live--; starter.live == 0 {
		close(starter.calls)
		starter.calls = nil
	}
}

// startLoop runs the starts sent to calls on one thread, until calls is
// closed: no child of the thread is left then, and the thread may serve
// other goroutines again.
func startLoop(calls <-chan func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for call := range calls {
		call()
	}
}
