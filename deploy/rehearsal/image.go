package rehearsal

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/saint-os/saint/internal/qemuvm"
)

// Packages are what the guest has besides systemd: the deployment scripts
// arrive over ssh and use sudo, the server's dnsmasq is preinstalled (the
// guest reaches no mirror), can-utils and iproute2 are for the drivers.
var Packages = []string{
	"iproute2", "can-utils", "openssh-server", "sudo", "dnsmasq", "procps",
	"util-linux", "ca-certificates", "i2c-tools", "v4l-utils",
}

// Recipe is the guest image: a Debian 12 server Pi stand-in. eth0 is QEMU's
// user network (ssh, the web UI and the WebSocket API forwarded to this
// machine's loopback); saint0, a dummy interface, is the robot's internal
// network that deploy_server.sh gives 192.168.10.1 (--iface saint0), on
// which the node in the same guest reaches the server. root logs in over ssh
// with sshPublicKey only.
func Recipe(sshPublicKey string) qemuvm.DebianImage {
	return qemuvm.DebianImage{
		Packages: Packages,
		Files: map[string]string{
			"/etc/hostname":                         "saint-server\n",
			"/etc/hosts":                            "127.0.0.1 localhost\n127.0.1.1 saint-server\n",
			"/etc/systemd/network/20-eth0.network":  "[Match]\nName=eth0\n\n[Network]\nDHCP=ipv4\n",
			"/etc/systemd/network/10-saint0.netdev": "[NetDev]\nName=saint0\nKind=dummy\n",
			// network-online.target once eth0 is up; saint0 gets its
			// address only from deploy_server.sh.
			"/etc/systemd/system/systemd-networkd-wait-online.service.d/any.conf": "[Service]\nExecStart=\nExecStart=/lib/systemd/systemd-networkd-wait-online --any --timeout=60\n",
			"/root/.ssh/authorized_keys":                                          sshPublicKey,
			"/etc/ssh/sshd_config.d/rehearsal.conf":                               "UseDNS no\nPermitRootLogin prohibit-password\n",
			// systemd reads this after the scripts' saint-watchdog.conf
			// (RuntimeWatchdogSec=10s): an emulated guest on a shared
			// machine can go 20 s without CPU (the i6300esb's two 10 s
			// stages) while nothing hangs, and such a reset ends the
			// rehearsal. The chain is the same with a longer timeout.
			"/etc/systemd/system.conf.d/zz-rehearsal-watchdog.conf": "[Manager]\nRuntimeWatchdogSec=30s\n",
			// QEMU's CPU model names AMD frequency scaling it does not
			// have: udev would try the module for each CPU at every boot.
			"/etc/modprobe.d/rehearsal.conf": "blacklist powernow_k8\n",
		},
		Setup: `systemctl enable systemd-networkd systemd-networkd-wait-online ssh
# What a headless guest does not need and a TCG boot pays for.
systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer \
	getty-static.service getty@tty1.service dpkg-db-backup.timer 2>/dev/null || true
chmod 0700 /root/.ssh
`,
	}
}

// CacheDir is where built images and the guest's ssh key are kept:
// $SAINT_REHEARSAL_CACHE, else saint-rehearsal in the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache).
func CacheDir() (string, error) {
	if d := os.Getenv("SAINT_REHEARSAL_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("rehearsal: %w", err)
	}
	return filepath.Join(d, "saint-rehearsal"), nil
}

// SSHKey returns the private key file with which root logs into guests,
// made in dir the first time (an Ed25519 key without passphrase: it opens
// only a VM whose ssh port is on this machine's loopback).
func SSHKey(ctx context.Context, dir string) (keyFile, publicKey string, err error) {
	keyFile = filepath.Join(dir, "ssh-key")
	if _, err := os.Stat(keyFile); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", fmt.Errorf("rehearsal: %w", err)
		}
		out, err := exec.CommandContext(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "saint-rehearsal", "-f", keyFile).CombinedOutput()
		if err != nil {
			return "", "", fmt.Errorf("rehearsal: ssh-keygen: %w: %s", err, out)
		}
	}
	pub, err := os.ReadFile(keyFile + ".pub")
	if err != nil {
		return "", "", fmt.Errorf("rehearsal: %w", err)
	}
	return keyFile, string(pub), nil
}

// Image builds (or finds in the cache) the guest image for kernel k.
func Image(ctx context.Context, k qemuvm.Kernel, cacheDir string, log io.Writer) (image, keyFile string, times qemuvm.BuildTimes, err error) {
	keyFile, pub, err := SSHKey(ctx, cacheDir)
	if err != nil {
		return "", "", times, err
	}
	image, times, err = Recipe(pub).Build(ctx, k, cacheDir, log)
	return image, keyFile, times, err
}
