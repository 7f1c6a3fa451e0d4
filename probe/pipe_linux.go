package probe

import (
	"os"
	"syscall"
	"unsafe"
)

// unreadBytes returns how many bytes written to a pipe (either end) its
// reader has not read yet (FIONREAD).
func unreadBytes(f *os.File) (n int, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var count int32
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&count)))
	}); err != nil || errno != 0 {
		return 0, false
	}
	return int(count), true
}
