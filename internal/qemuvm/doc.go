// Package qemuvm boots Debian's own Linux kernel under QEMU (qemu-system-x86_64)
// and drives the guest from Go: the project's rehearsal of a real robot
// (docs/rehearsal.md) and the tests that run the real drivers against a real
// kernel use it.
//
// The pieces:
//
//   - FindKernel finds the installed Debian kernel (/boot/vmlinuz-*, its
//     initrd and /lib/modules/VERSION).
//   - Initramfs writes a cpio "newc" archive (the format the kernel unpacks,
//     Documentation/driver-api/early-userspace/buffer-format.rst), and
//     BusyboxInitramfs makes a whole quick-boot one: busybox-static, the
//     kernel modules asked for with their dependencies (modules.dep), loaded
//     in order, and the guest agent.
//   - Start runs qemu with TCG (KVM only when asked for, and KVMWorks says
//     whether it actually boots here), an i6300esb watchdog device, QEMU user
//     networking with restrict=on and explicit forwards bound to 127.0.0.1 so
//     nothing leaves the machine, extra ISA serial ports as host
//     pseudo-terminals, and a virtio-serial command channel.
//   - VM.Run runs a shell command in the guest over that channel and returns
//     its output and exit status; VM.WaitConsole waits for a pattern on the
//     serial console with a deadline; VM.PowerCut kills qemu like pulling the
//     plug.
//
// The guest side of the command channel is AgentScript, a POSIX shell loop:
// BusyboxInitramfs starts it from init, and a Debian root file system runs it
// from AgentUnit (a systemd service). The protocol, one line each way:
//
//	host  -> guest:  ID BASE64(shell command)
//	guest -> host:   ID EXIT-STATUS BASE64(stdout and stderr)
//	guest -> host:   READY BOOT-ID        (when the agent starts)
//
// Commands run one at a time, with stdin from /dev/null; start long-running
// guest work in the background (setsid CMD >LOG 2>&1 &).
//
// Guest networking: the guest's virtio NIC is QEMU's user network 10.0.2.0/24
// (the guest is 10.0.2.15 by DHCP) with restrict=on: the guest reaches
// nothing but the forwards. Config.Forwards opens a guest TCP port on a free
// port of the host's 127.0.0.1 (VM.HostAddr).
package qemuvm
