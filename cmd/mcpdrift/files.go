package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
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
	fi, _ := os.Stat(path)
	return replaceFile(path, data, fi)
}

// replaceFile writes data to path through a temporary file renamed over
// it, with the mode (and owner) of the file like describes, if any.
func replaceFile(path string, data []byte, like fs.FileInfo) error {
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
	if like != nil {
		if err := likeFile(tmp, like); err != nil {
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
	return chownLike(f, fi)
}

// keepBackup keeps one backup of a host's file, FILE.mcpdrift.bak: the
// file as it was before mcpdrift changed it. A wrap of a file with nothing
// wrapped in it (fresh) starts afresh, since unwrap gave back what the
// previous backup held and the user may have edited the file since; any
// other change keeps the backup there is, so wrap/unwrap cycles leave one
// file. The backup has the file's mode: it may hold the same secrets.
func keepBackup(path string, data []byte, fresh bool) (string, error) {
	name := path + ".mcpdrift.bak"
	if old, err := os.ReadFile(name); err == nil && (!fresh || bytes.Equal(old, data)) {
		return name, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return name, replaceFile(name, data, fi)
}
