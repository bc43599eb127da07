package qemuvm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// KVMWorks boots k with KVM and a BusyboxInitramfs and reports whether its
// agent answered within limit (nil: use Config.KVM). /dev/kvm can exist
// where KVM cannot run a guest: nested virtualisation that hangs in the
// boot loader, or a CPU model qemu cannot set up. It costs up to limit.
func KVMWorks(ctx context.Context, k Kernel, limit time.Duration) error {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("qemuvm: KVM: %w", err)
	}
	f.Close()
	dir, err := os.MkdirTemp("", "qemuvm-kvm-")
	if err != nil {
		return fmt.Errorf("qemuvm: %w", err)
	}
	defer os.RemoveAll(dir)
	img, err := BusyboxInitramfs(k, InitramfsOptions{})
	if err != nil {
		return err
	}
	initrd := filepath.Join(dir, "initramfs.cpio")
	if err := img.WriteFile(initrd); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	vm, err := Start(ctx, Config{Kernel: k, Initramfs: initrd, MemoryMB: 256, CPUs: 1, KVM: true})
	if err != nil {
		return fmt.Errorf("qemuvm: KVM: %w", err)
	}
	defer vm.Close()
	if _, status, err := vm.Run(ctx, "true"); err != nil || status != 0 {
		return fmt.Errorf("qemuvm: KVM: the guest did not answer within %v (%v)", limit, err)
	}
	return nil
}
