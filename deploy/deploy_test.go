package deploy

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/fwsign"
)

// Every deployment script (scripts/*.sh, a new one included) passes
// shellcheck as POSIX sh, following the files it sources. make
// shellcheck-deps installs shellcheck.
func TestScriptsPassShellcheck(t *testing.T) {
	scripts, err := filepath.Glob("scripts/*.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scripts/deploy_server.sh", "scripts/flash_node.sh", "scripts/can-up.sh", "scripts/lib.sh"} {
		if !slices.Contains(scripts, want) {
			t.Errorf("%s missing: shellcheck would lint only %v", want, scripts)
		}
	}
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed (make shellcheck-deps, or apt-get install shellcheck); the deployment scripts were not linted")
	}
	out, err := exec.Command(sc, append([]string{"-x", "-s", "sh"}, scripts...)...).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

// unit parses a systemd unit file into section → key → values (a key may
// repeat).
func unit(t *testing.T, name string) map[string]map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("systemd", name))
	if err != nil {
		t.Fatal(err)
	}
	return parseUnit(t, name, data)
}

// parseUnit parses the text of a unit file.
func parseUnit(t *testing.T, name string, data []byte) map[string]map[string][]string {
	t.Helper()
	u := map[string]map[string][]string{}
	section := ""
	var cont string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cont != "" {
			line = cont + " " + line
			cont = ""
		}
		if strings.HasSuffix(line, `\`) {
			cont = strings.TrimSuffix(line, `\`)
			continue
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: line %q is not KEY=VALUE in a section", name, line)
			}
			u[section][k] = append(u[section][k], strings.Join(strings.Fields(v), " "))
		}
	}
	return u
}

func one(t *testing.T, u map[string]map[string][]string, section, key string) string {
	t.Helper()
	v := u[section][key]
	if len(v) == 0 {
		t.Errorf("[%s] %s missing", section, key)
		return ""
	}
	return v[len(v)-1]
}

func TestNodeUnit(t *testing.T) {
	u := unit(t, "saint-node.service")
	if got := one(t, u, "Service", "Restart"); got != "on-failure" {
		t.Errorf("Restart=%s, want on-failure (a failed firmware image is rolled back by the next start)", got)
	}
	pre := strings.Join(u["Service"]["ExecStartPre"], "\n")
	if !strings.Contains(pre, "/usr/local/bin/saint-node --rollback-check --state-dir /var/lib/saint") {
		t.Errorf("ExecStartPre %q lacks the rollback hook", pre)
	}
	start := one(t, u, "Service", "ExecStart")
	for _, want := range []string{"/usr/local/bin/saint-node", "--hal pi", "--state-dir /var/lib/saint", "--server ${SAINT_SERVER}"} {
		if !strings.Contains(start, want) {
			t.Errorf("ExecStart %q lacks %q", start, want)
		}
	}
	if one(t, u, "Service", "StateDirectory") != "saint" {
		t.Error("StateDirectory must be saint (/var/lib/saint, where role and firmware live)")
	}
	// Hardening must leave the node its hardware.
	allowed := strings.Join(u["Service"]["DeviceAllow"], " ")
	for _, dev := range []string{"char-gpiochip", "char-i2c", "char-spi", "char-ttyAMA", "char-ttyUSB"} {
		if !strings.Contains(allowed, dev+" rw") {
			t.Errorf("DeviceAllow lacks %s rw (have %s)", dev, allowed)
		}
	}
	families := one(t, u, "Service", "RestrictAddressFamilies")
	for _, f := range []string{"AF_CAN", "AF_INET", "AF_NETLINK"} {
		if !strings.Contains(families, f) {
			t.Errorf("RestrictAddressFamilies=%s lacks %s", families, f)
		}
	}
	groups := one(t, u, "Service", "SupplementaryGroups")
	for _, g := range []string{"gpio", "i2c", "spi", "dialout"} {
		if !strings.Contains(groups, g) {
			t.Errorf("SupplementaryGroups=%s lacks %s", groups, g)
		}
	}
	for _, k := range []string{"PrivateDevices", "ProtectKernelTunables", "NoExecPaths"} {
		if v := u["Service"][k]; len(v) > 0 && v[len(v)-1] == "yes" {
			t.Errorf("%s=yes would cut the node off its devices, /sys/class/pwm or its installed images", k)
		}
	}
	if one(t, u, "Service", "NoNewPrivileges") != "yes" || one(t, u, "Service", "ProtectSystem") != "strict" {
		t.Error("the node unit is not hardened (NoNewPrivileges, ProtectSystem=strict)")
	}
	// Real-time mode without capabilities: the rlimits grant SCHED_FIFO
	// (hal/rt.DefaultPriority) and mlockall.
	if v := one(t, u, "Service", "LimitRTPRIO"); v != "99" {
		t.Errorf("LimitRTPRIO=%s, want 99 so the control loop may run SCHED_FIFO", v)
	}
	if v := one(t, u, "Service", "LimitMEMLOCK"); v != "infinity" {
		t.Errorf("LimitMEMLOCK=%s, want infinity so real-time mode may lock memory", v)
	}
	if v := u["Service"]["RestrictRealtime"]; len(v) > 0 && v[len(v)-1] == "yes" {
		t.Error("RestrictRealtime=yes forbids the real-time control loop")
	}
	checkWatchdog(t, u, "saint-node", 2*time.Second)
	post := strings.Join(u["Service"]["ExecStopPost"], "\n")
	if !strings.Contains(post, "/usr/local/bin/saint-node safe-outputs --state-dir /var/lib/saint") {
		t.Errorf("ExecStopPost %q lacks the safe-outputs step", post)
	}
	if strings.Contains(post, "+/") || strings.Contains(post, "!/") {
		t.Errorf("ExecStopPost %q runs with privileges: safe-outputs needs only the node's own device access", post)
	}
}

// checkWatchdog checks a unit that pings systemd's watchdog from its
// executor (internal/sdnotify): Type=notify, so READY=1 is awaited and the
// pings are accepted, WatchdogSec= at most max, a restart after the kill.
func checkWatchdog(t *testing.T, u map[string]map[string][]string, name string, most time.Duration) {
	t.Helper()
	if v := one(t, u, "Service", "Type"); v != "notify" {
		t.Errorf("%s: Type=%s, want notify (READY=1 and WATCHDOG=1 come from the executor)", name, v)
	}
	if v := one(t, u, "Service", "NotifyAccess"); v != "main" {
		t.Errorf("%s: NotifyAccess=%s, want main: only the service's own process may vouch for it", name, v)
	}
	d, err := time.ParseDuration(one(t, u, "Service", "WatchdogSec"))
	if err != nil || d <= 0 || d > most {
		t.Errorf("%s: WatchdogSec=%v (%v): want a positive time of at most %v", name, d, err, most)
	}
	if v := one(t, u, "Service", "Restart"); v != "on-failure" && v != "always" {
		t.Errorf("%s: Restart=%s does not restart a service the watchdog killed", name, v)
	}
}

// The drop-in that makes systemd feed the hardware watchdog.
func TestHardwareWatchdogDropIn(t *testing.T) {
	data, err := os.ReadFile("systemd/saint-watchdog.conf")
	if err != nil {
		t.Fatal(err)
	}
	u := parseUnit(t, "saint-watchdog.conf", data)
	d, err := time.ParseDuration(one(t, u, "Manager", "RuntimeWatchdogSec"))
	// bcm2835-wdt, the Raspberry Pi's, times out at most about 15 s.
	if err != nil || d <= 0 || d > 15*time.Second {
		t.Errorf("RuntimeWatchdogSec=%v (%v): want a time the Pi's watchdog can count (at most 15 s)", d, err)
	}
	if one(t, u, "Manager", "RebootWatchdogSec") == "" {
		t.Error("RebootWatchdogSec unset")
	}
}

func TestServerUnit(t *testing.T) {
	u := unit(t, "saint-server.service")
	if got := one(t, u, "Service", "Restart"); got != "on-failure" {
		t.Errorf("Restart=%s, want on-failure", got)
	}
	start := one(t, u, "Service", "ExecStart")
	for _, want := range []string{"/usr/local/bin/saint-server", "--data /var/lib/saint-server", "--nats 192.168.10.1:4222", "--firmware-http 192.168.10.1:8080", "--ws :9090", "--http :80", "--mdns ${SAINT_MDNS}"} {
		if !strings.Contains(start, want) {
			t.Errorf("ExecStart %q lacks %q", start, want)
		}
	}
	if env := strings.Join(u["Service"]["Environment"], " "); !strings.Contains(env, "SAINT_MDNS=auto") {
		t.Errorf("Environment=%s: mDNS must be on by default on the robot (SAINT_MDNS=auto)", env)
	}
	if caps := one(t, u, "Service", "AmbientCapabilities"); caps != "CAP_NET_BIND_SERVICE" {
		t.Errorf("AmbientCapabilities=%s, want only CAP_NET_BIND_SERVICE (port 80)", caps)
	}
	if one(t, u, "Service", "User") == "root" || one(t, u, "Service", "User") == "" {
		t.Error("saint-server must not run as root")
	}
	if !strings.Contains(strings.Join(u["Unit"]["After"], " "), "network-online.target") {
		t.Error("saint-server must start after network-online.target: it binds the internal address")
	}
	checkWatchdog(t, u, "saint-server", 30*time.Second)
}

func TestROS2Unit(t *testing.T) {
	u := unit(t, "saint-ros2.service")
	start := one(t, u, "Service", "ExecStart")
	for _, want := range []string{"/usr/local/bin/saint-ros2", "--nats nats://192.168.10.1:4222"} {
		if !strings.Contains(start, want) {
			t.Errorf("ExecStart %q lacks %q", start, want)
		}
	}
	if one(t, u, "Service", "User") == "root" || one(t, u, "Service", "User") == "" {
		t.Error("saint-ros2 must not run as root")
	}
	env := strings.Join(u["Service"]["Environment"], " ")
	if !strings.Contains(env, "ROS_DOMAIN_ID=") || !strings.Contains(env, `NetworkInterface address=\"192.168.10.1\"`) {
		t.Errorf("Environment %q: want ROS_DOMAIN_ID and Cyclone DDS on the internal address only", env)
	}
	if !strings.Contains(strings.Join(u["Unit"]["After"], " "), "saint-server.service") {
		t.Error("saint-ros2 must start after saint-server: it joins the server's broker")
	}
	// No bridge without its server: it would advertise a robot that is
	// not there.
	for _, dep := range []string{"BindsTo", "PartOf"} {
		if one(t, u, "Unit", dep) != "saint-server.service" {
			t.Errorf("saint-ros2's %s= is %q, want saint-server.service", dep, u["Unit"][dep])
		}
	}
	if !strings.Contains(strings.Join(u["Install"]["WantedBy"], " "), "saint-server.service") {
		t.Error("saint-ros2 must be WantedBy= saint-server.service: started again with its server")
	}
	if one(t, u, "Service", "NoNewPrivileges") != "yes" || one(t, u, "Service", "ProtectSystem") != "strict" {
		t.Error("the bridge unit is not hardened (NoNewPrivileges, ProtectSystem=strict)")
	}
	// A crashed bridge comes back, however often it crashes.
	if got := one(t, u, "Service", "Restart"); got != "on-failure" && got != "always" {
		t.Errorf("saint-ros2's Restart=%s, want on-failure: a crashed bridge must be restarted", got)
	}
	if one(t, u, "Service", "RestartSec") == "" {
		t.Error("saint-ros2 has no RestartSec=: a bridge crashing at start would be restarted in a tight loop")
	}
	if got := one(t, u, "Unit", "StartLimitIntervalSec"); got != "0" {
		t.Errorf("saint-ros2's StartLimitIntervalSec=%s, want 0: systemd must not give up restarting a bridge a peer keeps crashing", got)
	}
}

func TestUnitsVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed; the units were not verified by systemd")
	}
	out, _ := exec.Command(sa, "verify", "--man=no", "systemd/saint-node.service", "systemd/saint-server.service", "systemd/saint-ros2.service").CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// The commands are installed on the Pi, not here.
		if line == "" || strings.Contains(line, "is not executable: No such file or directory") {
			continue
		}
		t.Errorf("systemd-analyze verify: %s", line)
	}
}

// dryRun runs a script with SAINT_DRY_RUN=1, HOME an empty directory (no
// release key of the user running the tests) and no SAINT_KEY_DIR.
func dryRun(t *testing.T, script string, args ...string) (string, error) {
	t.Helper()
	return dryRunEnv(t, script, []string{"HOME=" + t.TempDir(), "SAINT_KEY_DIR="}, args...)
}

func dryRunEnv(t *testing.T, script string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{script}, args...)...)
	cmd.Env = append(append(os.Environ(), "SAINT_DRY_RUN=1"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestDeployServerDryRun(t *testing.T) {
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, []byte("# head\ndhcp-host=dc:a6:32:00:00:01,192.168.10.11,head\nnot a host line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := dryRun(t, "scripts/deploy_server.sh", "--host", "pi@robot", "--skip-build", "--iface", "eth1", "--node-hosts", hosts)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var conf []string
	for _, line := range strings.Split(out, "\n") {
		if c, ok := strings.CutPrefix(line, "  | "); ok {
			conf = append(conf, c)
		}
	}
	rendered := strings.Join(conf, "\n")
	for _, want := range []string{
		"interface=eth1", "except-interface=wlan0",
		"dhcp-range=192.168.10.10,192.168.10.254,255.255.255.0,12h",
		"dhcp-option=option:dns-server,192.168.10.1",
		"address=/saint-server.local/192.168.10.1",
		"dhcp-host=dc:a6:32:00:00:01,192.168.10.11,head",
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).MatchString(rendered) {
			t.Errorf("rendered dnsmasq configuration lacks the line %q:\n%s", want, rendered)
		}
	}
	if strings.Contains(rendered, "@") || strings.Contains(rendered, "not a host line") {
		t.Errorf("placeholders or junk left in the dnsmasq configuration:\n%s", rendered)
	}
	for _, want := range []string{
		"install -m 0644 /tmp/saint-deploy/saint-server.service /etc/systemd/system/",
		"install -D -m 0644 /tmp/saint-deploy/saint-watchdog.conf /etc/systemd/system.conf.d/saint-watchdog.conf && systemctl daemon-reexec",
		"install -D -m 0644 /tmp/saint-deploy/saint-internal.conf /etc/dnsmasq.d/saint-internal.conf",
		"ipv4.addresses 192.168.10.1/24",
		"systemctl enable dnsmasq saint-server",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("deploy_server.sh plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "saint-ros2") {
		t.Errorf("without --with-ros2, deploy_server.sh plans to install the ROS 2 bridge:\n%s", out)
	}
	if out, err := dryRun(t, "scripts/deploy_server.sh", "--skip-build"); err == nil || !strings.Contains(out, "--host") {
		t.Errorf("without --host: %v %s", err, out)
	}
}

// fakeCrossCC writes a stand-in for an arm64 C compiler: it preprocesses
// anything and, if lib is not empty, finds libddsc.so there.
func fakeCrossCC(t *testing.T, lib string) string {
	t.Helper()
	dir := t.TempDir()
	find := "echo libddsc.so" // what gcc prints for a library it does not find
	if lib != "" {
		find = "echo " + lib
	}
	cc := filepath.Join(dir, "aarch64-fake-gcc")
	script := "#!/bin/sh\ncase \"$*\" in\n*-print-file-name=libddsc.so*) " + find + " ;;\n*-E*) cat >/dev/null ;;\n*) exit 1 ;;\nesac\n"
	if err := os.WriteFile(cc, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return cc
}

// inOrder says whether every step appears in out, each after the one
// before.
func inOrder(out string, steps ...string) bool {
	for _, s := range steps {
		i := strings.Index(out, s)
		if i < 0 {
			return false
		}
		out = out[i+len(s):]
	}
	return true
}

// --with-ros2 installs the ROS 2 bridge: cross-compiled here when an arm64
// compiler with arm64 Cyclone DDS is at hand, otherwise built on the Pi
// from the checkout, before anything is installed there.
func TestDeployServerWithROS2DryRun(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libddsc.so")
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cross, noDDS := fakeCrossCC(t, lib), fakeCrossCC(t, "")
	install := []string{
		"apt-get install -y cyclonedds-dev",
		"useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin saint-ros2",
		"install -m 0755 /tmp/saint-deploy/saint-ros2 /usr/local/bin/",
		"install -D -m 0644 /tmp/saint-deploy/ros2.md /usr/local/share/doc/saint/ros2.md",
		"install -m 0644 /tmp/saint-deploy/saint-ros2.service /etc/systemd/system/",
		"systemctl restart dnsmasq saint-server",
		"systemctl enable saint-ros2 && systemctl restart saint-ros2",
	}
	piBuild := "CGO_ENABLED=1 \"$GO\" build -trimpath -ldflags '-s -w -X main.version=1.2.0' -o /tmp/saint-deploy/saint-ros2 ./cmd/saint-ros2"
	crossBuild := "run: env CGO_ENABLED=1 CC=" + cross + " GOOS=linux GOARCH=arm64 go build -trimpath -ldflags -s -w -X main.version=1.2.0 -o bin/linux-arm64/ ./cmd/saint-ros2"
	for _, tc := range []struct {
		name  string
		args  []string
		cross bool
	}{
		{"on the Pi", []string{"--skip-build", "--ros2-build", "pi"}, false},
		{"auto without a cross compiler", []string{"--ros2-cc", filepath.Join(t.TempDir(), "missing-gcc")}, false},
		{"auto without arm64 Cyclone DDS", []string{"--ros2-cc", noDDS}, false},
		{"auto with a cross compiler", []string{"--ros2-cc", cross}, true},
		{"cross", []string{"--ros2-build", "cross", "--ros2-cc", cross}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--host", "pi@robot", "--version", "1.2.0", "--with-ros2"}, tc.args...)
			out, err := dryRun(t, "scripts/deploy_server.sh", args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, want := range install {
				if !strings.Contains(out, want) {
					t.Errorf("plan lacks %q:\n%s", want, out)
				}
			}
			if !inOrder(out, "systemctl restart dnsmasq saint-server", "systemctl enable saint-ros2") {
				t.Errorf("saint-ros2 must start after saint-server (which makes its key):\n%s", out)
			}
			if tc.cross {
				if !strings.Contains(out, crossBuild) || !strings.Contains(out, "copy bin/linux-arm64/saint-ros2 deploy/systemd/saint-ros2.service docs/ros2.md -> pi@robot:/tmp/saint-deploy/") {
					t.Errorf("cross: plan lacks the local arm64 cgo build %q or the copy of its binary:\n%s", crossBuild, out)
				}
				if strings.Contains(out, piBuild) || strings.Contains(out, "saint-src.tgz") {
					t.Errorf("cross: the plan also builds on the Pi:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, "saint-src.tgz deploy/systemd/saint-ros2.service docs/ros2.md -> pi@robot:/tmp/saint-deploy/") {
				t.Errorf("on the Pi: the source tree is not copied:\n%s", out)
			}
			// Built before anything is installed: a failed build leaves the Pi as it was.
			if !inOrder(out, "apt-get install -y gcc libc6-dev", piBuild, "install -m 0755 /tmp/saint-deploy/saint-server") {
				t.Errorf("on the Pi: the plan lacks the build %q before the first install:\n%s", piBuild, out)
			}
			if strings.Contains(out, "GOARCH=arm64 go build -trimpath -ldflags -s -w -X main.version=1.2.0 -o bin/linux-arm64/ ./cmd/saint-ros2") {
				t.Errorf("on the Pi: the plan also cross-compiles:\n%s", out)
			}
		})
	}
	for _, bad := range [][]string{
		{"--ros2-build", "cross", "--ros2-cc", noDDS},
		{"--ros2-build", "cross", "--ros2-cc", filepath.Join(t.TempDir(), "missing-gcc")},
		{"--ros2-build", "sideways"},
	} {
		out, err := dryRun(t, "scripts/deploy_server.sh", append([]string{"--host", "pi@robot", "--with-ros2"}, bad...)...)
		if err == nil || strings.Contains(out, "copy ") || strings.Contains(out, "remote ") {
			t.Errorf("deploy_server.sh %q: %v, want a refusal before anything is copied:\n%s", bad, err, out)
		}
		if bad[1] == "cross" && !strings.Contains(out, "cyclonedds-dev:arm64") {
			t.Errorf("deploy_server.sh %q does not say what to install:\n%s", bad, out)
		}
	}
}

func TestFlashNodeDryRun(t *testing.T) {
	dir := t.TempDir()
	image := filepath.Join(dir, "saint_node.img")
	data := []byte("node image")
	if err := os.WriteFile(image, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if err := os.WriteFile(image+".sha256", []byte(hex.EncodeToString(sum[:])+"  saint_node.img\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := dryRun(t, "scripts/flash_node.sh", "--host", "pi@node1", "--image", image, "--can", "can0:500000", "--args", "--reset-pin 21", "--pwm")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"SAINT_SERVER=nats://192.168.10.1:4222", `SAINT_NODE_ARGS="--reset-pin 21"`, `SAINT_CAN="can0:500000"`,
		"install -m 0755 /tmp/saint-node-install/saint_node.img /usr/local/bin/saint-node",
		"install -m 0644 /tmp/saint-node-install/saint-node.env /etc/default/saint-node",
		"install -D -m 0644 /tmp/saint-node-install/saint-watchdog.conf /etc/systemd/system.conf.d/saint-watchdog.conf && systemctl daemon-reexec",
		"raspi-config nonint do_i2c 0", "usermod -a -G gpio,i2c,spi,dialout,video saint",
		"systemctl daemon-reload && systemctl enable --now saint-node",
		"grep -q '^dtoverlay=pwm-2chan' $c || echo 'dtoverlay=pwm-2chan,pin=12,func=4,pin2=13,func2=4' >>$c",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("flash_node.sh plan lacks %q:\n%s", want, out)
		}
	}
	checkEnrolment(t, out, "pi-serial", "nodes enrol pi-serial --out ")
	// A damaged image is refused before anything is copied.
	if err := os.WriteFile(image, []byte("node imagf"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err = dryRun(t, "scripts/flash_node.sh", "--host", "pi@node1", "--image", image)
	if err == nil || !strings.Contains(out, "does not match") || strings.Contains(out, "copy ") {
		t.Errorf("damaged image: %v\n%s", err, out)
	}
	for _, bad := range [][]string{{"--host", "pi@n", "--image", image, "--can", "can0"}, {"--host", "pi@n", "--server", "192.168.10.1"},
		{"--host", "pi@n", "--image", image, "--id", "pi 1"}, {"--host", "pi@n", "--image", image, "--api", "http://server/saint"}} {
		if out, err := dryRun(t, "scripts/flash_node.sh", bad...); err == nil {
			t.Errorf("flash_node.sh %q accepted:\n%s", bad, out)
		}
	}
}

// checkEnrolment checks a flash_node.sh plan enrols the node before it
// first starts: the key registered with the server (saintctl nodes enrol,
// run as enrolArgs), the key and the CA fingerprint installed in its state
// directory for the service's user, any CA it pinned before removed, and
// only then the service started.
func checkEnrolment(t *testing.T, out, id, enrolArgs string) {
	t.Helper()
	order := []string{
		"saintctl --server ws://192.168.10.1:9090/saint " + enrolArgs,
		"enrol/bus.nk ",
		"install -m 0600 -o saint -g saint /tmp/saint-node-install/bus.nk /var/lib/saint/bus.nk",
		"install -m 0644 -o saint -g saint /tmp/saint-node-install/bus-ca.sha256 /var/lib/saint/bus-ca.sha256 && rm -f /var/lib/saint/bus-ca.pem",
		"systemctl daemon-reload && systemctl enable --now saint-node",
		"Enrolled as " + id,
	}
	at := 0
	for _, want := range order {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Errorf("flash_node.sh plan lacks %q after position %d (the enrolment in order):\n%s", want, at, out)
			return
		}
		at += i + len(want)
	}
	if strings.Contains(out, "--trust-first-server") {
		t.Errorf("an enrolled node is given --trust-first-server:\n%s", out)
	}
}

// With an id, a token and the CA fingerprint, flash_node.sh enrols the
// node under that id and has saintctl check the server's CA; with
// --trust-first-server it enrols nothing and says so.
func TestFlashNodeEnrolment(t *testing.T) {
	dir := t.TempDir()
	image := filepath.Join(dir, "saint_node.img")
	if err := os.WriteFile(image, []byte("node image"), 0o755); err != nil {
		t.Fatal(err)
	}
	fp := strings.Repeat("ab", 32)
	out, err := dryRun(t, "scripts/flash_node.sh", "--host", "pi@node1", "--image", image, "--id", "head-1",
		"--token-file", "/etc/saint/token", "--ca-sha256", fp)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkEnrolment(t, out, "head-1", "--token-file /etc/saint/token nodes enrol head-1 --out ")
	if !strings.Contains(out, "--ca-sha256 "+fp) || strings.Contains(out, "/proc/cpuinfo") {
		t.Errorf("with --id and --ca-sha256: the plan reads the serial or does not check the CA:\n%s", out)
	}

	out, err = dryRun(t, "scripts/flash_node.sh", "--host", "pi@node1", "--image", image, "--trust-first-server", "--args", "--reset-pin 21")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, unwanted := range []string{"nodes enrol", "bus.nk", "/proc/cpuinfo"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("--trust-first-server plan has %q:\n%s", unwanted, out)
		}
	}
	for _, want := range []string{`SAINT_NODE_ARGS="--trust-first-server --reset-pin 21"`, "WARNING: --trust-first-server"} {
		if !strings.Contains(out, want) {
			t.Errorf("--trust-first-server plan lacks %q:\n%s", want, out)
		}
	}
}

// releaseKey writes a release key pair (saintctl firmware keygen's files)
// into dir and returns the private key's path and the public key.
func releaseKey(t *testing.T, dir string) (string, string) {
	t.Helper()
	pub, err := fwsign.WriteKeyPair(dir, "saint-release")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "saint-release.key"), fwsign.EncodePublic(pub)
}

// deploy_server.sh signs the firmware it builds: with the release key kept
// in the key directory, generated there when there is none, or imported
// into it with --sign-key; make firmware gets SIGN_KEY, which also builds
// the key into the node image.
func TestDeployServerSigningKey(t *testing.T) {
	build := func(keyDir string) string {
		return "run: make firmware VERSION=1.2.0 SIGN_KEY=" + filepath.Join(keyDir, "saint-release.key")
	}
	t.Run("generated when there is none", func(t *testing.T) {
		home := t.TempDir()
		keyDir := filepath.Join(home, ".config/saint/keys")
		out, err := dryRunEnv(t, "scripts/deploy_server.sh", []string{"HOME=" + home, "SAINT_KEY_DIR="}, "--host", "pi@robot", "--version", "1.2.0")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !inOrder(out, "run: mkdir -p "+keyDir, "run: chmod 0700 "+keyDir, "run: go run ./cmd/saintctl firmware keygen --out "+keyDir,
			"run: chmod 0600 "+filepath.Join(keyDir, "saint-release.key"), build(keyDir), "copy ") {
			t.Errorf("plan does not generate the key in %s before the signed build:\n%s", keyDir, out)
		}
	})
	t.Run("kept", func(t *testing.T) {
		keyDir := t.TempDir()
		releaseKey(t, keyDir)
		out, err := dryRunEnv(t, "scripts/deploy_server.sh", []string{"SAINT_KEY_DIR=" + keyDir}, "--host", "pi@robot", "--version", "1.2.0")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if strings.Contains(out, "keygen") || strings.Contains(out, "install -m 0600") || !strings.Contains(out, build(keyDir)) {
			t.Errorf("an existing key must be used as it is:\n%s", out)
		}
	})
	t.Run("imported", func(t *testing.T) {
		key, _ := releaseKey(t, t.TempDir())
		keyDir := filepath.Join(t.TempDir(), "keys")
		out, err := dryRun(t, "scripts/deploy_server.sh", "--host", "pi@robot", "--version", "1.2.0", "--sign-key", key, "--key-dir", keyDir)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !inOrder(out, "run: install -m 0600 "+key+" "+filepath.Join(keyDir, "saint-release.key"),
			"firmware pubkey --key "+filepath.Join(keyDir, "saint-release.key")+" > "+filepath.Join(keyDir, "saint-release.pub"), build(keyDir)) ||
			strings.Contains(out, "keygen") {
			t.Errorf("plan does not import %s into %s:\n%s", key, keyDir, out)
		}
	})
	t.Run("another key is not overwritten", func(t *testing.T) {
		keyDir := t.TempDir()
		releaseKey(t, keyDir)
		other, _ := releaseKey(t, t.TempDir())
		out, err := dryRun(t, "scripts/deploy_server.sh", "--host", "pi@robot", "--sign-key", other, "--key-dir", keyDir)
		if err == nil || !strings.Contains(out, "holds another release key") || strings.Contains(out, "run: ") {
			t.Errorf("importing a second key: %v, want a refusal before anything runs:\n%s", err, out)
		}
	})
	t.Run("not a private key", func(t *testing.T) {
		dir := t.TempDir()
		releaseKey(t, dir)
		out, err := dryRun(t, "scripts/deploy_server.sh", "--host", "pi@robot", "--sign-key", filepath.Join(dir, "saint-release.pub"))
		if err == nil || !strings.Contains(out, "not a release private key") {
			t.Errorf("a public key as --sign-key: %v\n%s", err, out)
		}
	})
	t.Run("skip build", func(t *testing.T) {
		out, err := dryRun(t, "scripts/deploy_server.sh", "--host", "pi@robot", "--skip-build")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if strings.Contains(out, "keygen") || strings.Contains(out, "make firmware") {
			t.Errorf("--skip-build builds or makes a key:\n%s", out)
		}
	})
}

// flash_node.sh makes nodes that trust the release key: it reports the key
// built into the image (the manifest's signing_key, found in the image),
// and installs a release public key file the node trusts besides
// (--firmware-key); with neither it warns that the node will refuse every
// update.
func TestFlashNodeReleaseKey(t *testing.T) {
	keyDir := t.TempDir()
	_, pub := releaseKey(t, keyDir)
	// The image as make firmware publishes it: firmware/current/, the
	// manifest in firmware/.
	image := func(t *testing.T, builtIn string) string {
		t.Helper()
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "current"), 0o755); err != nil {
			t.Fatal(err)
		}
		img := filepath.Join(dir, "current", "saint_node.img")
		if err := os.WriteFile(img, []byte("ELF... main.firmwareKey="+builtIn+" ..."), 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := `{"version": "1.2.0", "firmware": {"sha256": "00", "signing_key": "` + pub + `", "signature": "AA=="}}`
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		return img
	}
	const keyArg = "--firmware-key /etc/saint/saint-release.pub"
	t.Run("built in", func(t *testing.T) {
		out, err := dryRun(t, "scripts/flash_node.sh", "--host", "pi@node1", "--image", image(t, pub), "--args", "--reset-pin 21")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(out, "trusts the release key "+pub+" (built in)") || strings.Contains(out, "warning") {
			t.Errorf("the built-in key is not reported:\n%s", out)
		}
		if strings.Contains(out, keyArg) || !strings.Contains(out, `SAINT_NODE_ARGS="--reset-pin 21"`) {
			t.Errorf("no key file was given, yet one is installed:\n%s", out)
		}
	})
	t.Run("key file", func(t *testing.T) {
		for _, args := range [][]string{
			{"--release-key", filepath.Join(keyDir, "saint-release.pub")},
			{"--release-key", filepath.Join(keyDir, "saint-release.key")}, // its .pub beside it
			{"--key-dir", keyDir},
		} {
			out, err := dryRun(t, "scripts/flash_node.sh", append([]string{"--host", "pi@node1", "--image", image(t, ""), "--args", "--reset-pin 21"}, args...)...)
			if err != nil {
				t.Fatalf("%q: %v\n%s", args, err, out)
			}
			for _, want := range []string{
				`SAINT_NODE_ARGS="` + keyArg + ` --reset-pin 21"`,
				"saint-release.pub -> pi@node1:/tmp/saint-node-install/",
				"install -D -m 0644 /tmp/saint-node-install/saint-release.pub /etc/saint/saint-release.pub",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("%q: plan lacks %q:\n%s", args, want, out)
				}
			}
		}
	})
	t.Run("none", func(t *testing.T) {
		out, err := dryRun(t, "scripts/flash_node.sh", "--host", "pi@node1", "--image", image(t, ""))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(out, "will refuse every firmware update") || strings.Contains(out, keyArg) {
			t.Errorf("an image trusting no key is flashed without a warning:\n%s", out)
		}
	})
	t.Run("not a key", func(t *testing.T) {
		junk := filepath.Join(t.TempDir(), "junk.pub")
		if err := os.WriteFile(junk, []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := dryRun(t, "scripts/flash_node.sh", "--host", "pi@node1", "--image", image(t, ""), "--release-key", junk)
		if err == nil || strings.Contains(out, "copy ") {
			t.Errorf("a file that is no key: %v\n%s", err, out)
		}
	})
}
