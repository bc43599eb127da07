package qemuvm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// BusyboxPath is where Debian's busybox-static installs its static busybox.
const BusyboxPath = "/bin/busybox"

// InitramfsOptions says what a BusyboxInitramfs holds besides busybox and the
// agent.
type InitramfsOptions struct {
	// Modules are loaded at boot with their dependencies, after virtio_pci
	// and virtio_console (the command channel). With virtio_net the guest's
	// eth0 gets QEMU's user-network address 10.0.2.15/24.
	Modules []string
	// Files maps a guest path to a file of this machine copied there
	// (permissions kept).
	Files map[string]string
	// Init is shell run by init after the modules, before the agent.
	Init string
}

// BusyboxInitramfs makes an initramfs that boots k in a few seconds: a static
// busybox (busybox-static) as every command, the modules asked for (also in
// /lib/modules/VERSION with modules.dep, so modprobe finds them), and the
// agent as the last thing init starts. Its console prints "qemuvm: init
// done" once the modules are loaded and opts.Init has run.
func BusyboxInitramfs(k Kernel, opts InitramfsOptions) (*Initramfs, error) {
	if _, err := os.Stat(BusyboxPath); err != nil {
		return nil, fmt.Errorf("qemuvm: %s: %w (install busybox-static)", BusyboxPath, err)
	}
	modules, err := k.ModuleFiles(append([]string{"virtio_pci", "virtio_console"}, opts.Modules...)...)
	if err != nil {
		return nil, err
	}
	var a Initramfs
	a.HostFile("bin/busybox", BusyboxPath)
	for _, d := range []string{"dev", "proc", "sys", "run", "tmp", "sbin", "etc", "root"} {
		a.Dir(d, 0o755)
	}
	var load strings.Builder
	for _, m := range modules {
		a.HostFile(m, m)
		fmt.Fprintf(&load, "insmod %s || echo 'qemuvm: insmod %s failed'\n", m, filepath.Base(m))
	}
	a.HostFile(filepath.Join(k.Modules, "modules.dep"), filepath.Join(k.Modules, "modules.dep"))
	for guest, host := range opts.Files {
		a.HostFile(guest, host)
	}
	network := ""
	for _, m := range opts.Modules {
		if strings.ReplaceAll(m, "-", "_") == "virtio_net" {
			network = "ip link set lo up; ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2\n"
		}
	}
	a.File("sbin/qemuvm-agent", 0o755, []byte(AgentScript))
	a.File("init", 0o755, []byte(`#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
hostname qemuvm
`+load.String()+network+opts.Init+`
echo 'qemuvm: init done'
while :; do /sbin/qemuvm-agent; sleep 1; done
`))
	return &a, nil
}

// WriteFile writes the archive to path.
func (a *Initramfs) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("qemuvm: %w", err)
	}
	if _, err := a.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
