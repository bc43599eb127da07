package qemuvm

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Initramfs builds a cpio archive in the "newc" format the kernel unpacks
// into its root file system at boot (initramfs). Directories leading to a
// file are added on the way; the zero value is empty and ready to use.
type Initramfs struct {
	buf   bytes.Buffer
	ino   uint32
	added map[string]bool
	err   error
}

// Cpio file-type bits of the mode field (they are the stat(2) ones).
const (
	cpioDir     = 0o040000
	cpioFile    = 0o100000
	cpioSymlink = 0o120000
)

// Dir adds a directory (and its parents).
func (a *Initramfs) Dir(name string, perm fs.FileMode) {
	name = clean(name)
	if name == "" || a.added[name] {
		return
	}
	a.Dir(path.Dir(name), 0o755)
	a.entry(name, cpioDir|uint32(perm.Perm()), nil)
}

// File adds a regular file with the given contents and permissions.
func (a *Initramfs) File(name string, perm fs.FileMode, data []byte) {
	name = clean(name)
	a.Dir(path.Dir(name), 0o755)
	a.entry(name, cpioFile|uint32(perm.Perm()), data)
}

// HostFile adds a copy of a file of this machine under name.
func (a *Initramfs) HostFile(name, hostPath string) {
	data, err := os.ReadFile(hostPath)
	if err != nil {
		a.setErr(fmt.Errorf("qemuvm: initramfs %s: %w", name, err))
		return
	}
	st, err := os.Stat(hostPath)
	if err != nil {
		a.setErr(fmt.Errorf("qemuvm: initramfs %s: %w", name, err))
		return
	}
	a.File(name, st.Mode().Perm(), data)
}

// Symlink adds a symbolic link name pointing at target.
func (a *Initramfs) Symlink(name, target string) {
	name = clean(name)
	a.Dir(path.Dir(name), 0o755)
	a.entry(name, cpioSymlink|0o777, []byte(target))
}

// WriteTo writes the archive with its trailer. It fails with the first
// error of a HostFile.
func (a *Initramfs) WriteTo(w io.Writer) (int64, error) {
	if a.err != nil {
		return 0, a.err
	}
	var out bytes.Buffer
	out.Write(a.buf.Bytes())
	writeCpioEntry(&out, "TRAILER!!!", 0, 0, nil)
	return out.WriteTo(w)
}

func (a *Initramfs) setErr(err error) {
	if a.err == nil {
		a.err = err
	}
}

func (a *Initramfs) entry(name string, mode uint32, data []byte) {
	if a.added == nil {
		a.added = map[string]bool{}
	}
	a.added[name] = true
	a.ino++
	writeCpioEntry(&a.buf, name, a.ino, mode, data)
}

func clean(name string) string {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	if name == "." {
		return ""
	}
	return name
}

// writeCpioEntry writes one newc header (110 bytes: the magic and 13
// eight-digit hex fields), the name with its NUL, padding to 4 bytes, the
// data and padding to 4 bytes.
func writeCpioEntry(w *bytes.Buffer, name string, ino, mode uint32, data []byte) {
	nlink := uint32(1)
	if mode&0o170000 == cpioDir {
		nlink = 2
	}
	fmt.Fprintf(w, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	w.WriteString(name)
	w.WriteByte(0)
	pad(w)
	w.Write(data)
	pad(w)
}

func pad(w *bytes.Buffer) {
	for w.Len()%4 != 0 {
		w.WriteByte(0)
	}
}
