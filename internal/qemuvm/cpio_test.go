package qemuvm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestInitramfsUnpacks checks the archive with GNU cpio, an independent
// reader of the newc format: names, contents, modes and links come back.
func TestInitramfsUnpacks(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("cpio is not installed (make rehearsal-deps)")
	}
	var a Initramfs
	a.File("etc/motd", 0o644, []byte("hello\n"))
	a.File("/sbin/tool", 0o755, []byte("#!/bin/sh\nexit 3\n"))
	a.Symlink("bin/sh", "busybox")
	a.Dir("empty/dir", 0o700)
	a.File("odd", 0o600, []byte("x")) // a one-byte file: padding after it
	var buf bytes.Buffer
	if _, err := a.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("cpio", "-i", "-d", "--quiet", "--no-absolute-filenames")
	cmd.Dir = dir
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v: %s", err, out)
	}
	for name, want := range map[string]string{"etc/motd": "hello\n", "sbin/tool": "#!/bin/sh\nexit 3\n", "odd": "x"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	for name, want := range map[string]os.FileMode{"sbin/tool": 0o755, "odd": 0o600, "empty/dir": 0o700 | os.ModeDir} {
		st, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || st.Mode() != want {
			t.Errorf("%s mode = %v, %v; want %v", name, st.Mode(), err, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "bin/sh")); err != nil || target != "busybox" {
		t.Errorf("bin/sh -> %q, %v; want busybox", target, err)
	}
}

func TestInitramfsHostFileError(t *testing.T) {
	var a Initramfs
	a.HostFile("x", filepath.Join(t.TempDir(), "missing"))
	if _, err := a.WriteTo(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "initramfs x") {
		t.Errorf("WriteTo with a missing host file: %v; want an error naming x", err)
	}
}

// TestModuleFilesOrder: each module after its dependencies, each once, names
// with - or _ alike.
func TestModuleFilesOrder(t *testing.T) {
	dir := t.TempDir()
	dep := "kernel/a.ko: kernel/b.ko kernel/c-d.ko\nkernel/b.ko: kernel/c-d.ko\nkernel/c-d.ko:\nkernel/e.ko: kernel/b.ko kernel/c-d.ko\n"
	if err := os.WriteFile(filepath.Join(dir, "modules.dep"), []byte(dep), 0o644); err != nil {
		t.Fatal(err)
	}
	k := Kernel{Version: "test", Modules: dir}
	got, err := k.ModuleFiles("a", "e", "c_d")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, strings.TrimPrefix(p, dir+"/"))
	}
	want := []string{"kernel/c-d.ko", "kernel/b.ko", "kernel/a.ko", "kernel/e.ko"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("ModuleFiles = %v; want %v", names, want)
	}
	if _, err := k.ModuleFiles("nope"); err == nil {
		t.Error("ModuleFiles of a module that does not exist: no error")
	}
}

func TestFindKernelNewest(t *testing.T) {
	boot, mods := t.TempDir(), t.TempDir()
	for _, v := range []string{"6.1.0-9-amd64", "6.1.0-10-amd64", "6.1.0-11-amd64"} {
		os.WriteFile(filepath.Join(boot, "vmlinuz-"+v), nil, 0o644)
		if v != "6.1.0-11-amd64" { // no initrd: not usable
			os.WriteFile(filepath.Join(boot, "initrd.img-"+v), nil, 0o644)
		}
		os.MkdirAll(filepath.Join(mods, v), 0o755)
		os.WriteFile(filepath.Join(mods, v, "modules.dep"), nil, 0o644)
	}
	k, err := findKernel(boot, mods)
	if err != nil {
		t.Fatal(err)
	}
	if k.Version != "6.1.0-10-amd64" {
		t.Errorf("findKernel = %s; want 6.1.0-10-amd64 (the newest with an initrd)", k.Version)
	}
	if _, err := findKernel(t.TempDir(), mods); err == nil {
		t.Error("findKernel without kernels: no error")
	}
}
