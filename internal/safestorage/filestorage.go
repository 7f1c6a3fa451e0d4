package safestorage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"
)

// fileStoragePkg is the package of the contrib file_storage extension.
const fileStoragePkg = "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"

// storeFile is the file in which file_storage keeps a component's data.
type storeFile struct {
	path     string // "": not file_storage, or its directory is unknown
	recreate bool   // the extension's `recreate` setting
}

// locateFile returns the file of the file_storage extension ext for the
// component (kind, self): the extension's directory and the name it derives
// from the component (kind_type_name, unsafe characters escaped, a SHA-256
// when that is too long for a file name). The extension does not export its
// configuration, so directory and recreate are read by reflection; any
// other extension, or a file_storage that changed shape, yields no file.
func locateFile(ext component.Component, kind component.Kind, self component.ID) storeFile {
	v := reflect.ValueOf(ext)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return storeFile{}
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || v.Type().PkgPath() != fileStoragePkg {
		return storeFile{}
	}
	cfg := v.FieldByName("cfg")
	if cfg.Kind() != reflect.Pointer || cfg.IsNil() || cfg.Elem().Kind() != reflect.Struct {
		return storeFile{}
	}
	dir, recreate := cfg.Elem().FieldByName("Directory"), cfg.Elem().FieldByName("Recreate")
	if dir.Kind() != reflect.String || dir.String() == "" {
		return storeFile{}
	}
	name := escapeFileName(fmt.Sprintf("%s_%s_%s", strings.ToLower(kind.String()), self.Type(), self.Name()))
	if len(name) > 255 {
		sum := sha256.Sum256([]byte(name))
		name = hex.EncodeToString(sum[:])
	}
	return storeFile{path: filepath.Join(dir.String(), name), recreate: recreate.Kind() == reflect.Bool && recreate.Bool()}
}

// escapeFileName escapes as file_storage does: every character but letters,
// digits, '.', '-' and '_' becomes '~' and its code point in four hex digits.
func escapeFileName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "~%04X", r)
		}
	}
	return b.String()
}

// prepare checks an existing file before the extension opens it. bbolt
// answers some damage with an error ("invalid database"), some with a panic
// in the opening goroutine and some with a panic in a goroutine of its own,
// which nothing can recover: the whole Collector stops. file_storage's
// `recreate` acts on the second kind only. So the file is read here first,
// in a way that keeps every panic in this goroutine; a damaged file is moved
// aside when `recreate` is set (what the user asked for) and reported
// otherwise.
func (f storeFile) prepare(logger *zap.Logger) error {
	if f.path == "" {
		return nil
	}
	if info, err := os.Stat(f.path); errors.Is(err, fs.ErrNotExist) || err == nil && info.Size() == 0 {
		return nil // a new store: file_storage creates it
	}
	err := checkBolt(f.path)
	if err == nil || !f.recreate || errors.Is(err, errLocked) {
		return err
	}
	backup := f.path + "." + time.Now().UTC().Format("20060102T150405.000Z0700") + ".backup"
	if rerr := os.Rename(f.path, backup); rerr != nil {
		return fmt.Errorf("%w (moving it aside failed: %v)", err, rerr)
	}
	logger.Warn("Damaged storage file moved aside (recreate: true); starting with an empty store",
		zap.String("file", f.path), zap.String("backup", backup), zap.Error(err))
	return nil
}

var errLocked = errors.New("the file is locked by another process (another Collector on the same directory?)")

// checkBolt opens the bbolt file read-only and visits every key of every
// bucket, with memory faults turned into panics, and every panic into the
// error returned.
func checkBolt(path string) (err error) {
	defer recoverAs(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, berrors.ErrTimeout) {
		return errLocked
	}
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bbolt.Bucket) error {
			visit(b)
			return nil
		})
	})
}

func visit(b *bbolt.Bucket) {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				visit(nested)
			}
		}
	}
}
