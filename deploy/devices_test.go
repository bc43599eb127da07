package deploy

import (
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/server/inputs/joystick"
	"github.com/saint-os/saint/server/inputs/rc"
)

// deviceClass is what the kernel calls a character device's driver in
// /proc/devices (what DeviceAllow=char-NAME names) and the group Raspberry
// Pi OS's udev rules give its nodes to.
type deviceClass struct {
	pattern *regexp.Regexp
	classes []string // DeviceAllow=char-… entries that must all be there
	group   string
}

// deviceClasses maps the device paths roles and the server open to what a
// unit must grant. /dev/serial0 is a link to ttyAMA0 or ttyS0, depending on
// the overlays, so it needs both.
func deviceClasses() []deviceClass {
	c := func(re string, group string, classes ...string) deviceClass {
		return deviceClass{regexp.MustCompile(`^` + re + `$`), classes, group}
	}
	return []deviceClass{
		c(`/dev/gpiochip\d+`, "gpio", "char-gpiochip"),
		c(`/dev/i2c-\d+`, "i2c", "char-i2c"),
		c(`/dev/spidev\d+\.\d+`, "spi", "char-spi"),
		c(`/dev/ttyAMA\d+`, "dialout", "char-ttyAMA"),
		c(`/dev/ttyS\d+`, "dialout", "char-ttyS"),
		c(`/dev/ttyUSB\d+`, "dialout", "char-ttyUSB"),
		c(`/dev/ttyACM\d+`, "dialout", "char-ttyACM"),
		c(`/dev/serial\d`, "dialout", "char-ttyAMA", "char-ttyS"),
		c(`/dev/video\d+`, "video", "char-video4linux"),
		c(`/dev/media\d+`, "video", "char-media"),
		c(`/dev/vchiq`, "video", "char-vchiq"),
		c(`/dev/dma_heap/.+`, "video", "char-dma_heap"),
		c(`/dev/input/(js|event)\d+`, "input", "char-input"),
	}
}

// need is what a process must be able to do: open device paths, write
// /sys/class/pwm, bring CAN interfaces up and use CAN sockets.
type need struct {
	devices []string
	pwm     bool
	can     bool
	why     map[string]string // device → which configuration needs it
}

func (n *need) device(path, why string) {
	if !slices.Contains(n.devices, path) {
		n.devices = append(n.devices, path)
		n.why[path] = why
	}
}

// roleNeeds is what a node running a shipped role configuration opens.
func roleNeeds(t *testing.T, n *need, name string, c *roleconfig.Config) {
	t.Helper()
	for _, f := range c.GPIOMapping {
		// Every header line is on the SoC's pinctrl chip: gpiochip0 on a
		// Pi 4 and, from kernel 6.6, on a Pi 5 (gpiochip4 before).
		n.device("/dev/gpiochip0", name+" gpio_mapping")
		n.device("/dev/gpiochip4", name+" gpio_mapping")
		if f.Type == "pwm" {
			n.pwm = true
		}
	}
	for _, d := range c.I2CDevices {
		n.device(fmt.Sprintf("/dev/i2c-%d", d.Bus), name+" i2c_devices")
	}
	for _, o := range c.PWMOutputs {
		n.device(fmt.Sprintf("/dev/i2c-%d", o.I2CBus()), name+" pwm_outputs")
	}
	for _, d := range c.SPIDevices {
		n.device(fmt.Sprintf("/dev/spidev%d.%d", d.Bus, d.CS), name+" spi_devices")
	}
	for _, u := range c.UART {
		p := u.Name
		if !strings.HasPrefix(p, "/") {
			p = "/dev/" + p
		}
		n.device(p, name+" uart")
	}
	if len(c.CAN) > 0 {
		n.can = true
	}
	if c.Camera != nil && c.Camera.Enabled {
		// A USB camera through V4L2, a CSI camera through rpicam-vid
		// (libcamera: media controller, V4L2 subdevices, DMA heaps; VCHIQ
		// on a Pi 4).
		for _, p := range []string{"/dev/video0", "/dev/media0", "/dev/dma_heap/linux,cma", "/dev/vchiq"} {
			n.device(p, name+" camera")
		}
	}
}

// granted checks one unit against what it must allow.
func granted(t *testing.T, unitName string, n need) {
	t.Helper()
	for _, p := range grantProblems(unitName, unit(t, unitName), n) {
		t.Error(p)
	}
}

// grantProblems lists what unit u (named unitName) does not grant of n.
func grantProblems(unitName string, u map[string]map[string][]string, n need) []string {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	svc := u["Service"]
	last := func(k string) string {
		if v := svc[k]; len(v) > 0 {
			return v[len(v)-1]
		}
		return ""
	}
	if last("User") == "" || last("User") == "root" {
		errorf("%s: runs as %q, want an unprivileged user", unitName, last("User"))
	}
	if last("PrivateDevices") == "yes" {
		errorf("%s: PrivateDevices=yes hides every device node it needs", unitName)
	}
	if last("DevicePolicy") != "closed" {
		errorf("%s: DevicePolicy=%q, want closed (only what DeviceAllow lists)", unitName, last("DevicePolicy"))
	}
	allowed := map[string]bool{}
	for _, v := range svc["DeviceAllow"] {
		f := strings.Fields(v)
		if len(f) == 2 && strings.Contains(f[1], "r") {
			allowed[f[0]] = true
		}
	}
	var groups []string
	for _, v := range svc["SupplementaryGroups"] {
		groups = append(groups, strings.Fields(v)...)
	}
	for _, p := range n.devices {
		var cls *deviceClass
		for _, c := range deviceClasses() {
			if c.pattern.MatchString(p) {
				cls = &c
				break
			}
		}
		if cls == nil {
			errorf("%s: %s (for %s) is a device this test does not know: add it to deviceClasses", unitName, p, n.why[p])
			continue
		}
		for _, want := range cls.classes {
			if !allowed[want] {
				errorf("%s: %s (for %s) needs DeviceAllow=%s", unitName, p, n.why[p], want)
			}
		}
		if !slices.Contains(groups, cls.group) {
			errorf("%s: %s (for %s) needs group %s in SupplementaryGroups (have %v)", unitName, p, n.why[p], cls.group, groups)
		}
	}
	if n.pwm {
		if last("ProtectKernelTunables") == "yes" {
			errorf("%s: hardware PWM writes /sys/class/pwm, which ProtectKernelTunables=yes makes read-only", unitName)
		}
		for _, k := range []string{"ReadOnlyPaths", "InaccessiblePaths"} {
			for _, v := range svc[k] {
				if strings.Contains(v, "/sys") {
					errorf("%s: %s=%s takes /sys/class/pwm away", unitName, k, v)
				}
			}
		}
		if !slices.Contains(groups, "gpio") {
			errorf("%s: /sys/class/pwm is group gpio's, which SupplementaryGroups lacks", unitName)
		}
	}
	if n.can {
		families := last("RestrictAddressFamilies")
		for _, f := range []string{"AF_CAN", "AF_NETLINK"} {
			if !strings.Contains(families, f) {
				errorf("%s: CAN needs %s in RestrictAddressFamilies (have %s)", unitName, f, families)
			}
		}
		if last("PrivateNetwork") == "yes" {
			errorf("%s: PrivateNetwork=yes hides can0", unitName)
		}
		// Bringing an interface up is `ip link`, which needs CAP_NET_ADMIN:
		// the can-up hook holds it (run as root, "!": still sandboxed, so
		// bounded by CapabilityBoundingSet), the node does not.
		var bounding []string
		for _, v := range svc["CapabilityBoundingSet"] {
			if v == "" {
				bounding = nil
				continue
			}
			bounding = append(bounding, strings.Fields(v)...)
		}
		if !slices.Contains(bounding, "CAP_NET_ADMIN") {
			errorf("%s: CapabilityBoundingSet=%v lacks CAP_NET_ADMIN, which can-up.sh's ip link needs", unitName, bounding)
		}
		if strings.Contains(strings.Join(svc["AmbientCapabilities"], " "), "CAP_NET_ADMIN") {
			errorf("%s: the node itself must not hold CAP_NET_ADMIN", unitName)
		}
		hook := false
		for _, v := range svc["ExecStartPre"] {
			cmd := strings.TrimLeft(v, "-@:")
			if strings.HasSuffix(strings.Fields(cmd)[0], "can-up.sh") {
				hook = true
				if !strings.HasPrefix(cmd, "!") {
					errorf("%s: ExecStartPre=%s: want the can-up hook run as root (\"!\") inside the sandbox", unitName, v)
				}
			}
		}
		if !hook {
			errorf("%s: no ExecStartPre runs can-up.sh", unitName)
		}
	}
	return problems
}

// Every device path a shipped role configuration makes the node open is
// allowed by saint-node.service.
func TestNodeUnitGrantsWhatTheRolesNeed(t *testing.T) {
	n := need{why: map[string]string{}}
	entries, err := fs.ReadDir(fixtures.Config(), "roles")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 5 {
		t.Fatalf("only %d role configurations shipped", len(entries))
	}
	for _, e := range entries {
		name := "roles/" + e.Name()
		data, err := fs.ReadFile(fixtures.Config(), name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := roleconfig.ParseFile(name, data)
		if err != nil {
			t.Fatal(err)
		}
		roleNeeds(t, &n, name, c)
	}
	// What the shipped roles use between them, so the check above cannot
	// pass by finding nothing.
	for _, p := range []string{"/dev/gpiochip0", "/dev/i2c-1", "/dev/spidev0.0", "/dev/ttyAMA0", "/dev/video0"} {
		if !slices.Contains(n.devices, p) {
			t.Errorf("no shipped role needs %s any more: update this test", p)
		}
	}
	if !n.pwm || !n.can {
		t.Errorf("shipped roles need PWM %v, CAN %v: want both", n.pwm, n.can)
	}
	granted(t, "saint-node.service", n)
}

// The server's inputs (the RC receiver, on a UART or on GPIO pins, and the
// joystick) can open their devices under saint-server.service.
func TestServerUnitGrantsItsInputs(t *testing.T) {
	n := need{why: map[string]string{}}
	data, err := fs.ReadFile(fixtures.Config(), "rc_receiver.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rc.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	n.device(cfg.UART.Device, "rc_receiver.yaml uart.device")
	// The protocol may be switched to PPM or PWM from the web UI at any
	// time: the receiver's GPIO pins must open too.
	if cfg.GPIO.PPMPin != 0 || len(cfg.GPIO.PWMPins) > 0 {
		n.device("/dev/gpiochip0", "rc_receiver.yaml gpio")
	}
	// A USB receiver or adapter.
	n.device("/dev/ttyUSB0", "an RC receiver on a USB serial adapter")
	n.device(joystick.DefaultDevice, "the joystick (--joystick)")
	granted(t, "saint-server.service", n)
}

// The device check itself fails on a unit that grants too little.
func TestDeviceCheckCatchesMissingGrants(t *testing.T) {
	orig, err := os.ReadFile("systemd/saint-server.service")
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(orig), "DeviceAllow=char-input r\n", "", 1)
	broken = strings.Replace(broken, "SupplementaryGroups=dialout gpio input\n", "SupplementaryGroups=dialout gpio\n", 1)
	broken = strings.Replace(broken, "DevicePolicy=closed\n", "PrivateDevices=yes\nDevicePolicy=closed\n", 1)
	if broken == string(orig) {
		t.Fatal("the unit changed: update this test's edits")
	}
	u := parseUnit(t, "broken.service", []byte(broken))
	n := need{devices: []string{joystick.DefaultDevice}, pwm: true, can: true, why: map[string]string{}}
	got := strings.Join(grantProblems("broken.service", u, n), "\n")
	for _, want := range []string{"DeviceAllow=char-input", "group input", "PrivateDevices=yes", "ProtectKernelTunables=yes", "AF_CAN", "CAP_NET_ADMIN", "can-up.sh"} {
		if !strings.Contains(got, want) {
			t.Errorf("the check did not report %q for a unit without it:\n%s", want, got)
		}
	}
}
