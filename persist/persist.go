package persist

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// WriteFile replaces path with data so that a crash at any moment leaves
// either the old file or the new one, never a torn mix: it writes a
// temporary file in the same directory, fsyncs it, renames it over path and
// fsyncs the directory so the rename itself is durable.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	// A directory made here is private: what is persisted is state.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("persist: writing %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("persist: syncing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	ok = true
	return SyncDir(dir)
}

// SyncDir fsyncs a directory so that renames and removals in it survive a
// power cut.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("persist: syncing %s: %w", dir, err)
	}
	return nil
}

// Remove deletes path (a missing file is not an error) and makes the
// removal durable.
func Remove(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("persist: %w", err)
	}
	return SyncDir(filepath.Dir(path))
}

// MoveAside renames a damaged file to path.corrupt-<UTC time> (kept for
// inspection, never overwritten), so that the program can start again
// from what it can rebuild. It returns the new name.
func MoveAside(path string, now time.Time) (string, error) {
	dst := path + ".corrupt-" + now.UTC().Format("20060102T150405.000Z")
	if _, err := os.Lstat(dst); err == nil {
		return "", fmt.Errorf("persist: %s already exists", dst)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("persist: %w", err)
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return dst, err
	}
	return dst, nil
}
