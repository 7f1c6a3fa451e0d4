// Package procs runs the child processes of the quickstart and of the
// end-to-end tests (demo server, collector, agent, Prometheus, Jaeger): each
// in its own process group, so that stopping it stops its children too, with
// its output in a log file; and finds free loopback ports and waits for HTTP
// endpoints.
package procs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a running child process.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
}

// Start starts bin with args in a new process group, its environment being
// this process's plus env, its output appended to logPath.
func Start(name, bin string, args, env []string, logPath string) (*Proc, error) {
	if bin == "" {
		return nil, fmt.Errorf("no binary for %s", name)
	}
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its children go with it
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// Signal sends sig to the process (not its group).
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Exited is closed when the process has exited.
func (p *Proc) Exited() <-chan struct{} { return p.done }

// Stop sends SIGTERM to the process group and, after grace, SIGKILL; it
// returns when the process has exited. Later calls do nothing.
func (p *Proc) Stop(grace time.Duration) {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		// Whatever the leader left in its group goes too.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	})
}

// Kill sends SIGKILL to the process group at once, as a crash or the OOM
// killer would, and returns when the process has exited. Later calls, and
// Stop, do nothing.
func (p *Proc) Kill() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
}

// CPUTime returns the user plus system CPU time the running process has
// used, from /proc/<pid>/stat (Linux), not counting its children.
func (p *Proc) CPUTime() (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count from
	// after its closing parenthesis, where field 3 (state) comes first.
	i := bytes.LastIndexByte(raw, ')')
	fields := strings.Fields(string(raw[i+1:]))
	if i < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", p.cmd.Process.Pid, raw)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime (fields 14 and 15)
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", p.cmd.Process.Pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// FreePorts asks the kernel for n free loopback ports.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// WaitHTTP polls url until ok(status), the timeout, or the process exits.
func (p *Proc) WaitHTTP(ctx context.Context, url string, timeout time.Duration, ok func(int) bool) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-p.done:
			cancel(fmt.Errorf("%s exited", p.Name))
		case <-ctx.Done():
		}
	}()
	err := WaitHTTP(ctx, url, timeout, ok)
	if cause := context.Cause(ctx); err != nil && cause != nil {
		return cause
	}
	return err
}

// WaitHTTP polls url until ok(status) or the timeout.
func WaitHTTP(ctx context.Context, url string, timeout time.Duration, ok func(int) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if ok(resp.StatusCode) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return err
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StatusOK accepts 200 only.
func StatusOK(code int) bool { return code == http.StatusOK }
