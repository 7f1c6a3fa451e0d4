//go:build unix

package h1client

import (
	"net"
	"syscall"
)

// open reports whether an idle kept-alive connection is still usable: the
// upstream has neither closed it nor sent anything unasked (a 408, say).
// Nothing to read yet is the one good answer: one non-blocking peek, no goroutine watching idle connections.
func open(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	usable := false
	var b [1]byte
	err = raw.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		usable = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true // never wait for data
	})
	return err == nil && usable
}
