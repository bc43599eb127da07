package rehearsal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/internal/qemuvm"
)

// The node the rehearsal provisions: the simulated head board (the guest's
// kernel has no GPIO or PWM simulator, docs/rehearsal.md) under a fixed id.
const (
	nodeID   = "rehearsal-head"
	nodeRole = "head"
	nodeArgs = "--hal sim --sim-hw head --id " + nodeID
)

// TestRehearsal is the rehearsal of docs/rehearsal.md, phase by phase; a
// failure names its phase and shows the tail of the guest's console.
func TestRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("the rehearsal boots a VM (minutes): not with -short")
	}
	r := newRehearsal(t)
	defer r.close()

	r.phase("copy of the checkout for the scripts", 5*time.Minute, r.copyCheckout)
	var base, sshKey string
	r.phase("root file system (mmdebstrap, cached by recipe)", 15*time.Minute, func(ctx context.Context) error {
		var times qemuvm.BuildTimes
		var err error
		base, sshKey, times, err = Image(ctx, r.kernel, r.cache, r.buildLog)
		if err == nil {
			if times.Cached {
				r.note("image from the cache: %s", filepath.Base(base))
			} else {
				r.note("built cold: mmdebstrap and setup %.1f s, mke2fs %.1f s", times.Bootstrap, times.Image)
			}
		}
		return err
	})
	r.sshKey = sshKey
	r.disk = filepath.Join(r.work, "disk.ext4")
	r.phase("disk image (sparse copy) and initramfs", 3*time.Minute, func(ctx context.Context) error {
		// A small initramfs that mounts the disk: Debian's initrd (30 MB,
		// every storage driver) takes much longer to unpack and probe.
		img, err := qemuvm.BusyboxInitramfs(r.kernel, qemuvm.InitramfsOptions{Root: "/dev/vda"})
		if err != nil {
			return err
		}
		r.initramfs = filepath.Join(r.work, "initramfs.cpio")
		if err := img.WriteFile(r.initramfs); err != nil {
			return err
		}
		return qemuvm.CopyImage(ctx, base, r.disk)
	})
	if os.Getenv("SAINT_REHEARSAL_KVM") == "1" {
		r.phase("KVM check (SAINT_REHEARSAL_KVM=1)", 2*time.Minute, func(ctx context.Context) error {
			if err := qemuvm.KVMWorks(ctx, r.kernel, 60*time.Second); err != nil {
				r.note("TCG: %v", err)
				return nil
			}
			r.kvm = true
			r.note("KVM works here: the VM uses it")
			return nil
		})
	}
	r.phase("boot (systemd, Debian's kernel, TCG)", 10*time.Minute, func(ctx context.Context) error { return r.boot(ctx, false) })
	r.phase("deploy_server.sh: release key, amd64 build, signed firmware 1.0.0, install over ssh", 15*time.Minute, r.deployServer)
	r.phase("server: unit, user, groups, healthz, token", 3*time.Minute, r.checkServer)
	r.phase("flash_node.sh over ssh", 5*time.Minute, r.flashNode)
	r.phase("node: unit, user, groups, announced unadopted", 3*time.Minute, r.checkNodeUnadopted)
	r.phase("adopt (saintctl over the WebSocket API, bus key from the journal)", 3*time.Minute, r.adopt)
	r.phase("signed update 1.0.0 -> 1.1.0 (make firmware, upload, trigger_update)", 8*time.Minute, r.update)
	r.phase("power cut while 1.2.0 downloads, reboot: old or new runs", 12*time.Minute, r.powerCut)
	r.phase("systemd watchdog: SIGSTOP saint-node", 3*time.Minute, r.systemdWatchdog)
	r.phase("hardware watchdog: kernel stall resets the VM (i6300esb)", 12*time.Minute, r.hardwareWatchdog)
}

type phaseTime struct {
	name    string
	seconds float64
	notes   []string
}

type rehearsal struct {
	t         *testing.T
	kernel    qemuvm.Kernel
	cache     string
	work      string
	disk      string
	sshKey    string
	kvm       bool
	initramfs string
	vm        *qemuvm.VM
	buildLog  *bytes.Buffer
	phases    []phaseTime
	current   *phaseTime

	src   string // the checkout's copy the scripts run from
	token string
}

func newRehearsal(t *testing.T) *rehearsal {
	if os.Geteuid() != 0 {
		t.Skip("the rehearsal builds its guest image as root (mmdebstrap): run make rehearsal as root")
	}
	for _, tool := range []string{"qemu-system-x86_64", "mmdebstrap", "mke2fs", "ssh", "scp", "ssh-keygen", "make", "go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make rehearsal-deps installs what the rehearsal needs)", tool)
		}
	}
	k, err := qemuvm.FindKernel()
	if err != nil {
		t.Skip(err)
	}
	cache, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return &rehearsal{t: t, kernel: k, cache: cache, work: t.TempDir(), buildLog: &bytes.Buffer{}}
}

// phase runs one step with its own deadline and records its time. A
// failure stops the rehearsal, naming the phase, with the console's tail.
func (r *rehearsal) phase(name string, limit time.Duration, f func(ctx context.Context) error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	r.phases = append(r.phases, phaseTime{name: name})
	r.current = &r.phases[len(r.phases)-1]
	start := time.Now()
	err := f(ctx)
	r.current.seconds = time.Since(start).Seconds()
	r.t.Logf("phase %q: %.1f s", name, r.current.seconds)
	if err != nil {
		console := "(no VM running)"
		if r.vm != nil {
			console = r.vm.ConsoleTail(6000)
			select {
			case <-r.vm.Exited(): // a reset without Reboot, or a crash
			case <-time.After(3 * time.Second):
			}
			select {
			case <-r.vm.Exited():
				console += fmt.Sprintf("\n--- qemu has exited (%v; a guest reset ends it unless the VM reboots) ---\n%s", r.vm.Wait(context.Background()), r.vm.Stderr())
			default:
			}
		}
		tail := r.buildLog.String()
		if len(tail) > 3000 {
			tail = tail[len(tail)-3000:]
		}
		r.t.Fatalf("rehearsal phase %q failed after %.1f s: %v\n--- guest console (tail) ---\n%s\n--- build log (tail) ---\n%s",
			name, r.current.seconds, err, console, tail)
	}
}

// note adds a line to the current phase's report.
func (r *rehearsal) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.current.notes = append(r.current.notes, s)
	r.t.Log("  " + s)
}

func (r *rehearsal) close() {
	if r.vm != nil {
		r.vm.Close()
	}
	var b strings.Builder
	total := 0.0
	for _, p := range r.phases {
		total += p.seconds
		fmt.Fprintf(&b, "%7.1f s  %s\n", p.seconds, p.name)
		for _, n := range p.notes {
			fmt.Fprintf(&b, "           %s\n", n)
		}
	}
	fmt.Fprintf(&b, "%7.1f s  total\n", total)
	r.t.Logf("rehearsal phases:\n%s", b.String())
}

// boot starts the VM on r.disk and waits until systemd has finished
// starting it. reboot: a guest reset restarts the guest instead of ending
// qemu.
func (r *rehearsal) boot(ctx context.Context, reboot bool) error {
	if r.vm != nil {
		r.vm.Close()
	}
	var console io.Writer
	if os.Getenv("SAINT_REHEARSAL_CONSOLE") != "" {
		console = os.Stderr
	}
	vm, err := qemuvm.Start(ctx, qemuvm.Config{
		Kernel: r.kernel, Disk: r.disk, Initramfs: r.initramfs, MemoryMB: 1024, CPUs: 2, Reboot: reboot, KVM: r.kvm,
		Append:   "net.ifnames=0",
		Forwards: []int{22, 80, 9090},
		Console:  console,
	})
	if err != nil {
		return err
	}
	r.vm = vm
	if err := vm.Ready(ctx); err != nil {
		return err
	}
	out, _, err := vm.Run(ctx, "systemctl is-system-running --wait; systemctl --failed --no-legend --plain")
	if err != nil {
		return err
	}
	r.note("systemd: %s", strings.Join(strings.Fields(out), " "))
	return nil
}

// guest runs a command in the guest over the agent channel; a non-zero
// exit status is an error carrying the output.
func (r *rehearsal) guest(ctx context.Context, command string) (string, error) {
	out, status, err := r.vm.Run(ctx, command)
	if err != nil {
		return "", err
	}
	if status != 0 {
		return out, fmt.Errorf("guest: %q exited %d: %s", command, status, out)
	}
	return out, nil
}

// sshOpts reach the guest's sshd through its forward; deploy scripts take
// them as SSH_OPTS (the same for ssh and scp: -o Port, not -p).
func (r *rehearsal) sshOpts() []string {
	_, port, _ := strings.Cut(r.vm.HostAddr(22), ":")
	// One ssh connection for all of a script's commands (ControlMaster):
	// each new one costs the guest's CPU seconds of key exchange under TCG.
	return []string{"-o", "Port=" + port, "-i", r.sshKey, "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=60",
		"-o", "ControlMaster=auto", "-o", "ControlPath=" + filepath.Join(r.work, "ssh-%C"), "-o", "ControlPersist=120"}
}

const target = "root@127.0.0.1"

// ssh runs a command on the guest the way the docs do from the build
// machine.
func (r *rehearsal) ssh(ctx context.Context, command string) (string, error) {
	args := append(r.sshOpts(), target, command)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.WaitDelay = 5 * time.Second // the ControlPersist master outlives the command
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ssh %s: %w: %s", command, err, out)
	}
	return string(out), nil
}

// host runs a command in the checkout's copy with the scripts' environment.
func (r *rehearsal) host(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second // the ControlPersist master outlives the command
	cmd.Dir = r.src
	cmd.Env = append(os.Environ(), env...)
	if r.vm != nil {
		cmd.Env = append(cmd.Env, "SSH_OPTS="+strings.Join(r.sshOpts(), " "))
	}
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, r.buildLog)
	cmd.Stderr = io.MultiWriter(&out, r.buildLog)
	fmt.Fprintf(r.buildLog, "$ %s %s\n", name, strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// eventually calls f until it succeeds or ctx ends (then its last error).
func eventually(ctx context.Context, interval time.Duration, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(interval):
		}
	}
}

// keyDir is the scripts' release key directory (--key-dir): made by
// deploy_server.sh at the first deploy.
func (r *rehearsal) keyDir() string { return filepath.Join(r.work, "keys") }

func (r *rehearsal) releaseKey() string { return filepath.Join(r.keyDir(), "saint-release.key") }

// copyCheckout copies the checkout (its tracked files as they are, like
// the scripts' own --ros2-build pi) so the scripts' builds leave the
// working tree alone.
func (r *rehearsal) copyCheckout(ctx context.Context) error {
	root, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("the rehearsal runs the scripts of a git checkout: %w", err)
	}
	r.src = filepath.Join(r.work, "src")
	copyTree := fmt.Sprintf("git ls-files -z | xargs -0 -I{} sh -c '[ -e \"{}\" ] && printf \"%%s\\0\" \"{}\"' | tar --null -cf - -T - | tar -C %q -xf -", r.src)
	if err := os.MkdirAll(r.src, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", copyTree)
	cmd.Dir = strings.TrimSpace(string(root))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("copying the checkout: %w: %s", err, out)
	}
	return nil
}

func (r *rehearsal) deployServer(ctx context.Context) error {
	// The server takes amd64 node images (documented setting).
	if _, err := r.ssh(ctx, `printf 'SAINT_SERVER_ARGS="--firmware-arch amd64"\n' >/etc/default/saint-server`); err != nil {
		return err
	}
	if _, err := r.host(ctx, nil, "deploy/scripts/deploy_server.sh", "--host", target, "--iface", "saint0",
		"--version", "1.0.0", "--arch", "amd64", "--key-dir", r.keyDir()); err != nil {
		return err
	}
	if _, err := os.Stat(r.releaseKey()); err != nil {
		return fmt.Errorf("deploy_server.sh made no release key: %w", err)
	}
	return nil
}

// unitProcess checks that a unit's main process runs as user with (at
// least) the groups named.
func (r *rehearsal) unitProcess(ctx context.Context, unit, user string, groups ...string) error {
	return eventually(ctx, 500*time.Millisecond, func() error {
		out, err := r.guest(ctx, fmt.Sprintf(`systemctl is-active %s >/dev/null || { systemctl status --no-pager %s; exit 1; }
pid=$(systemctl show -p MainPID --value %s)
ps -o user= -p "$pid"
for g in $(awk '/^Groups:/ { for (i = 2; i <= NF; i++) print $i }' /proc/$pid/status); do getent group "$g" | cut -d: -f1; done | tr '\n' ' '`, unit, unit, unit))
		if err != nil {
			return err
		}
		lines := strings.SplitN(out, "\n", 2)
		if got := strings.TrimSpace(lines[0]); got != user {
			return fmt.Errorf("%s runs as %q; want %q", unit, got, user)
		}
		have := " " + lines[1] + " "
		for _, g := range groups {
			if !strings.Contains(have, " "+g+" ") {
				return fmt.Errorf("%s has groups %q; want %s among them", unit, strings.TrimSpace(lines[1]), strings.Join(groups, " "))
			}
		}
		r.note("%s: user %s, groups %s", unit, user, strings.TrimSpace(lines[1]))
		return nil
	})
}

func (r *rehearsal) checkServer(ctx context.Context) error {
	if err := r.unitProcess(ctx, "saint-server", "saint-server", "dialout", "gpio", "input"); err != nil {
		return err
	}
	if _, err := r.guest(ctx, "systemctl is-active dnsmasq && ip -4 addr show saint0 | grep -q 'inet 192.168.10.1/24'"); err != nil {
		return err
	}
	err := eventually(ctx, 500*time.Millisecond, func() error {
		resp, err := http.Get("http://" + r.vm.HostAddr(80) + "/healthz")
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.TrimSpace(string(body)) != "ok" {
			return fmt.Errorf("/healthz answered %d %q; want ok", resp.StatusCode, body)
		}
		return nil
	})
	if err != nil {
		return err
	}
	token, err := r.ssh(ctx, "sudo cat /var/lib/saint-server/api_token")
	r.token = strings.TrimSpace(token)
	return err
}

func (r *rehearsal) flashNode(ctx context.Context) error {
	// Enrolment goes through the server's WebSocket API: here its forward
	// on the host's loopback, not 192.168.10.1, which only the guest has.
	tokenFile := filepath.Join(r.work, "token")
	if err := os.WriteFile(tokenFile, []byte(r.token+"\n"), 0o600); err != nil {
		return err
	}
	_, err := r.host(ctx, []string{"SAINTCTL=" + filepath.Join(r.src, "bin/linux-amd64/saintctl")},
		"deploy/scripts/flash_node.sh", "--host", target, "--key-dir", r.keyDir(),
		"--id", nodeID, "--api", "ws://"+r.vm.HostAddr(9090)+"/saint", "--token-file", tokenFile, "--args", nodeArgs)
	return err
}

// saintctl runs the host's saintctl against the guest's WebSocket API.
func (r *rehearsal) saintctl(ctx context.Context, args ...string) (string, error) {
	all := append([]string{"--server", "ws://" + r.vm.HostAddr(9090) + "/saint"}, args...)
	return r.host(ctx, []string{"SAINT_TOKEN=" + r.token}, filepath.Join(r.src, "bin/linux-amd64/saintctl"), all...)
}

type nodeEntry struct {
	NodeID     string `json:"node_id"`
	Role       string `json:"role"`
	Online     bool   `json:"online"`
	LastStatus *struct {
		State           string `json:"state"`
		FirmwareVersion string `json:"firmware_version"`
	} `json:"last_status"`
}

// adopted is the server's record of the node ("" state when it has none).
func (r *rehearsal) adopted(ctx context.Context) (nodeEntry, error) {
	out, err := r.saintctl(ctx, "call", "management", "list_adopted")
	if err != nil {
		return nodeEntry{}, err
	}
	var list struct {
		Nodes []nodeEntry `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &list); err != nil {
		return nodeEntry{}, fmt.Errorf("list_adopted: %w: %s", err, out)
	}
	for _, n := range list.Nodes {
		if n.NodeID == nodeID {
			return n, nil
		}
	}
	return nodeEntry{}, fmt.Errorf("%s is not adopted: %s", nodeID, out)
}

// waitActive waits until the server sees the node online and ACTIVE with
// one of the firmware versions, and returns the version.
func (r *rehearsal) waitActive(ctx context.Context, versions ...string) (string, error) {
	var version string
	err := eventually(ctx, time.Second, func() error {
		n, err := r.adopted(ctx)
		if err != nil {
			return err
		}
		if !n.Online || n.LastStatus == nil || n.LastStatus.State != "ACTIVE" {
			return fmt.Errorf("node %+v: not online and ACTIVE", n)
		}
		for _, v := range versions {
			if n.LastStatus.FirmwareVersion == v {
				version = v
				return nil
			}
		}
		return fmt.Errorf("node runs firmware %q; want one of %v", n.LastStatus.FirmwareVersion, versions)
	})
	return version, err
}

func (r *rehearsal) checkNodeUnadopted(ctx context.Context) error {
	if err := r.unitProcess(ctx, "saint-node", "saint", "gpio", "i2c", "spi", "dialout", "video"); err != nil {
		return err
	}
	return eventually(ctx, time.Second, func() error {
		out, err := r.saintctl(ctx, "nodes", "unadopted")
		if err != nil {
			return err
		}
		if !strings.Contains(out, `"`+nodeID+`"`) {
			return fmt.Errorf("%s is not among the unadopted nodes: %s", nodeID, out)
		}
		return nil
	})
}

var busKey = regexp.MustCompile(`^U[A-Z0-9]{55}$`)

func (r *rehearsal) adopt(ctx context.Context) error {
	// docs/deploy.md step 6: the key as the node logs it.
	out, err := r.ssh(ctx, `sudo journalctl -u saint-node | grep -o 'key=U[A-Z0-9]*' | tail -1 | cut -d= -f2`)
	if err != nil {
		return err
	}
	key := strings.TrimSpace(out)
	if !busKey.MatchString(key) {
		return fmt.Errorf("the node's journal gives bus key %q; want an nkey (U and 55 more)", key)
	}
	if _, err := r.saintctl(ctx, "adopt", nodeID, nodeRole, "--bus-key", key); err != nil {
		return err
	}
	v, err := r.waitActive(ctx, "1.0.0")
	if err == nil {
		r.note("ACTIVE as %s with firmware %s", nodeRole, v)
	}
	return err
}

// publish builds, signs and uploads a firmware version (docs/deploy.md
// step 9).
func (r *rehearsal) publish(ctx context.Context, version string) error {
	changelog := "rehearsal " + version
	if _, err := r.host(ctx, nil, "make", "firmware", "VERSION="+version, "CHANGELOG="+changelog, "SIGN_KEY="+r.releaseKey(), "FIRMWARE_ARCH=amd64"); err != nil {
		return err
	}
	_, err := r.host(ctx, nil, filepath.Join(r.src, "bin/linux-amd64/saintctl"), "firmware", "upload", "bin/saint-node-linux-amd64",
		"--version", version, "--changelog", changelog, "--sign-key", r.releaseKey(),
		"--server", "http://"+r.vm.HostAddr(80), "--token", r.token)
	return err
}

// trialOver waits until the installed image is no longer on trial.
func (r *rehearsal) trialOver(ctx context.Context, version string) error {
	return eventually(ctx, time.Second, func() error {
		_, err := r.guest(ctx, fmt.Sprintf(`grep -q 'version: "\?%s' /var/lib/saint/firmware/installed.yaml && ! test -e /var/lib/saint/firmware/trial.yaml`, regexp.QuoteMeta(version)))
		return err
	})
}

func (r *rehearsal) update(ctx context.Context) error {
	if err := r.publish(ctx, "1.1.0"); err != nil {
		return err
	}
	if _, err := r.saintctl(ctx, "call", "management", "trigger_update", "{}"); err != nil {
		return err
	}
	if _, err := r.waitActive(ctx, "1.1.0"); err != nil {
		return err
	}
	start := time.Now()
	if err := r.trialOver(ctx, "1.1.0"); err != nil {
		return err
	}
	r.note("1.1.0 ACTIVE; its trial closed %.1f s later", time.Since(start).Seconds())
	return nil
}

func (r *rehearsal) powerCut(ctx context.Context) error {
	if err := r.publish(ctx, "1.2.0"); err != nil {
		return err
	}
	// The guest says on its console the moment the download starts; the
	// host cuts the power when it reads it.
	const cue = "rehearsal: firmware download under way"
	if _, err := r.guest(ctx, `setsid sh -c 'while [ ! -e /var/lib/saint/firmware/download.part ]; do sleep 0.05; done; echo "`+cue+`" >/dev/ttyS0' >/dev/null 2>&1 &`); err != nil {
		return err
	}
	mark := r.vm.ConsoleLen()
	if _, err := r.saintctl(ctx, "call", "management", "trigger_update", "{}"); err != nil {
		return err
	}
	if _, err := r.vm.WaitConsole(ctx, regexp.MustCompile(regexp.QuoteMeta(cue)), mark); err != nil {
		return err
	}
	r.vm.PowerCut()
	r.note("power cut while download.part existed")
	if err := r.boot(ctx, true); err != nil {
		return err
	}
	if _, err := r.guest(ctx, "systemctl is-active saint-node"); err != nil {
		return err
	}
	v, err := r.waitActive(ctx, "1.1.0", "1.2.0")
	if err != nil {
		return err
	}
	// Which image each start of this boot ran (the launcher execs the
	// installed image in the same process, so both are logged).
	starts, err := r.guest(ctx, `journalctl -b -u saint-node --no-pager -o cat | grep -o 'saint-node starting.*version=[0-9.]*' | sed 's/.*version=//' | tr '\n' ' '`)
	if err != nil {
		return err
	}
	r.note("after the reboot: ACTIVE with firmware %s; saint-node started with %s", v, strings.TrimSpace(starts))
	// The running image's trial ends before the next check kills the node
	// on purpose (a kill during a trial rolls the image back, by design).
	return r.trialOver(ctx, v)
}

// systemdWatchdog stops the node's process: its pings to systemd stop,
// systemd kills it (SIGABRT), ExecStopPost runs saint-node safe-outputs,
// and Restart= brings it back (docs/deploy.md, "Watchdogs").
func (r *rehearsal) systemdWatchdog(ctx context.Context) error {
	if _, err := r.guest(ctx, "systemctl show -p Type,WatchdogUSec saint-node | tr '\\n' ' ' | grep -q 'Type=notify WatchdogUSec=2s'"); err != nil {
		return fmt.Errorf("saint-node.service is not Type=notify with WatchdogSec=2s: %w", err)
	}
	pid, err := r.guest(ctx, "systemctl show -p MainPID --value saint-node")
	if err != nil {
		return err
	}
	pid = strings.TrimSpace(pid)
	cursor, err := r.guest(ctx, "journalctl -u saint-node -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p'")
	if err != nil {
		return err
	}
	cursor = strings.TrimSpace(cursor)
	before, err := r.adopted(ctx)
	if err != nil || before.LastStatus == nil {
		return fmt.Errorf("the node's version before the stall: %v", err)
	}
	stopped, err := r.guest(ctx, "date '+%b %d %T.%6N'; kill -STOP "+pid)
	if err != nil {
		return err
	}
	r.note("%s SIGSTOP to saint-node (pid %s)", strings.TrimSpace(stopped), pid)
	err = eventually(ctx, 500*time.Millisecond, func() error {
		now, err := r.guest(ctx, "systemctl is-active saint-node >/dev/null && systemctl show -p MainPID --value saint-node")
		if err != nil {
			return err
		}
		if now = strings.TrimSpace(now); now == pid || now == "0" {
			return fmt.Errorf("saint-node still %s", pid)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// What systemd and the safe-outputs step logged, with the guest's own
	// timestamps (the host's clock would measure the test's polling).
	journal, err := r.guest(ctx, "journalctl -u saint-node --no-pager -o short-precise --after-cursor '"+cursor+"'")
	if err != nil {
		return err
	}
	for _, want := range []string{"Watchdog timeout", "service_result=watchdog"} {
		if !strings.Contains(journal, want) {
			return fmt.Errorf("the journal after SIGSTOP lacks %q:\n%s", want, journal)
		}
	}
	for _, line := range strings.Split(journal, "\n") {
		if strings.Contains(line, "Watchdog timeout") || strings.Contains(line, "safe outputs") ||
			strings.Contains(line, "Scheduled restart") || strings.Contains(line, "saint-node starting") {
			r.note("%s", strings.TrimSpace(line))
		}
	}
	// Restarted, not rolled back: the same image runs its role again.
	_, err = r.waitActive(ctx, before.LastStatus.FirmwareVersion)
	return err
}

func (r *rehearsal) hardwareWatchdog(ctx context.Context) error {
	// systemd has the i6300esb open and running, with the rehearsal's
	// timeout (image.go) in place of saint-watchdog.conf's 10 s, which the
	// scripts installed.
	out, err := r.guest(ctx, "grep -h '^RuntimeWatchdogSec' /etc/systemd/system.conf.d/saint-watchdog.conf; systemctl show -p RuntimeWatchdogUSec --value; cat /sys/class/watchdog/watchdog0/identity /sys/class/watchdog/watchdog0/state /sys/class/watchdog/watchdog0/timeout")
	if err != nil {
		return err
	}
	if f := strings.Fields(out); len(f) < 5 || f[0] != "RuntimeWatchdogSec=10s" || f[1] != "30s" || f[len(f)-2] != "active" {
		return fmt.Errorf("want saint-watchdog.conf installed and systemd's RuntimeWatchdogSec 30s on an active watchdog0; got %q", out)
	}
	r.note("systemd RuntimeWatchdogSec and /dev/watchdog0: %s", strings.Join(strings.Fields(out), " "))
	boots := r.vm.Boots()
	mark := r.vm.ConsoleLen()
	start := time.Now()
	// Every CPU spun by a SCHED_FIFO 99 task with real-time throttling off:
	// nothing else runs, systemd stops petting the watchdog.
	stall, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r.vm.Run(stall, `sysctl -q -w kernel.sched_rt_runtime_us=-1
for c in $(seq 0 $(($(nproc) - 1))); do setsid chrt -f 99 taskset -c $c sh -c 'while :; do :; done' >/dev/null 2>&1 & done`)
	if _, err := r.vm.WaitConsole(ctx, regexp.MustCompile(`Linux version`), mark); err != nil {
		return err
	}
	r.note("the kernel booted again %.1f s after the stall began", time.Since(start).Seconds())
	if err := r.vm.WaitBoots(ctx, boots+1); err != nil {
		return err
	}
	_, err = r.waitActive(ctx, "1.1.0", "1.2.0")
	return err
}
