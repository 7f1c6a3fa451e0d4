//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// chownLike gives f the owner of the file fi describes when we may (as
// root).
func chownLike(f *os.File, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		return f.Chown(int(st.Uid), int(st.Gid))
	}
	return nil
}
