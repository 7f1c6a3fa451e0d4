package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// writeFileAtomic replaces path with data through a temporary file in the
// same directory, so a reader (a host, the proxy) never sees half a file
// and a crash leaves the old one. An existing file keeps its mode and, when
// we may, its owner; a symbolic link (configs kept in a dotfiles repository)
// stays a link and its target is replaced.
func writeFileAtomic(path string, data []byte) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if fi, err := os.Stat(path); err == nil {
		if err := likeFile(tmp, fi); err != nil {
			return err
		}
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}

// likeFile gives f the mode of the file fi describes and, when we may (as
// root), its owner: the user whose file it is must still own it.
func likeFile(f *os.File, fi fs.FileInfo) error {
	if err := f.Chmod(fi.Mode().Perm()); err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		return f.Chown(int(st.Uid), int(st.Gid))
	}
	return nil
}

// writeBackup copies data, the file's content before a change, next to it:
// FILE.bak, or FILE.bak.<time> when FILE.bak already holds something else,
// so an earlier backup (the file before its first wrap) is never lost. The
// backup has the file's mode: it may hold the same secrets.
func writeBackup(path string, data []byte) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	name := path + ".bak"
	if old, err := os.ReadFile(name); err == nil && string(old) == string(data) {
		return name, nil
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for i := 0; ; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			name = fmt.Sprintf("%s.bak.%s", path, stamp)
			if i > 0 {
				name = fmt.Sprintf("%s.bak.%s.%d", path, stamp, i)
			}
			continue
		}
		if err != nil {
			return "", err
		}
		err = likeFile(f, fi)
		if err == nil {
			_, err = f.Write(data)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
}
