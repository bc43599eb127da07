package pi

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/boardtest"
	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/sim/twin"
	"github.com/saint-os/saint/sim/twin/mpu6050"
	"github.com/saint-os/saint/sim/twin/pca9685"
)

const tol = 1e-9

// overlay is a filesystem tree with some files replaced.
type overlay struct {
	base  fs.FS
	files fstest.MapFS
}

func (o overlay) ReadLink(name string) (string, error) {
	if _, ok := o.files[name]; ok {
		return o.files.ReadLink(name)
	}
	return fs.ReadLink(o.base, name)
}

func (o overlay) Lstat(name string) (fs.FileInfo, error) {
	if _, ok := o.files[name]; ok {
		return o.files.Lstat(name)
	}
	return fs.Lstat(o.base, name)
}

func (o overlay) Open(name string) (fs.File, error) {
	if _, ok := o.files[name]; ok {
		return o.files.Open(name)
	}
	return o.base.Open(name)
}

// rpi4 is the recorded Raspberry Pi 4, with changes.
func rpi4(changes fstest.MapFS) fs.FS {
	return overlay{base: os.DirFS("testdata/rpi4"), files: changes}
}

func noDisk() (uint64, uint64, error) { return 0, 0, errors.New("no disk in tests") }
func fixedAddress() string            { return "192.168.10.21" }

func newPi4(t *testing.T, o *Options) *Board {
	t.Helper()
	if o == nil {
		o = &Options{}
	}
	if o.Root == nil {
		o.Root = rpi4(nil)
	}
	if o.DiskUsage == nil {
		o.DiskUsage = noDisk
	}
	if o.Address == nil {
		o.Address = fixedAddress
	}
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInfoFromARaspberryPi4(t *testing.T) {
	b := newPi4(t, nil)
	want := board.Info{
		NodeID:      "pi-100000009f7698d9",
		Serial:      "100000009f7698d9",
		MACAddress:  "dc:a6:32:4b:7e:10",
		Model:       "Raspberry Pi 4 Model B Rev 1.4",
		HardwareRev: "1.4",
		MemoryMB:    4096,
		Address:     "192.168.10.21",
	}
	if got := b.Info(); got != want {
		t.Errorf("Info() =\n%+v\nwant\n%+v", got, want)
	}
	d := b.Details()
	if d.Hostname != "saint-head" || d.Revision.SoC != "BCM2711" || d.Revision.Type != 0x11 || d.Revision.Maker != "Sony UK" {
		t.Errorf("Details() = %+v", d)
	}
	if id := newPi4(t, &Options{NodeID: "head-1"}).Info().NodeID; id != "head-1" {
		t.Errorf("NodeID override gave %q", id)
	}
}

func TestRevisionCodes(t *testing.T) {
	for _, tc := range []struct {
		code string
		want Revision
	}{
		{"c03114", Revision{Code: 0xc03114, Type: 0x11, Revision: 4, MemoryMB: 4096, SoC: "BCM2711", Maker: "Sony UK"}},
		// Pi 5 8 GB.
		{"d04170", Revision{Code: 0xd04170, Type: 0x17, Revision: 0, MemoryMB: 8192, SoC: "BCM2712", Maker: "Sony UK"}},
		// Pi 3 B+ (1 GB, Sony UK).
		{"a020d3", Revision{Code: 0xa020d3, Type: 0x0d, Revision: 3, MemoryMB: 1024, SoC: "BCM2837", Maker: "Sony UK"}},
	} {
		got, err := parseRevision(tc.code)
		if err != nil || got != tc.want {
			t.Errorf("parseRevision(%q) = %+v, %v; want %+v", tc.code, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "xyz", "000e"} {
		if _, err := parseRevision(bad); err == nil {
			t.Errorf("parseRevision(%q) succeeded", bad)
		}
	}
}

func TestMACFallsBackToAnotherEthernetInterface(t *testing.T) {
	// No eth0 address: the first Ethernet-type interface by name is wlan0
	// (lo is loopback, can0 is CAN).
	b := newPi4(t, &Options{Root: rpi4(fstest.MapFS{"sys/class/net/eth0/address": {Data: []byte("00:00:00:00:00:00\n")}})})
	if mac := b.Info().MACAddress; mac != "dc:a6:32:4b:7e:11" {
		t.Errorf("MAC %q, want wlan0's dc:a6:32:4b:7e:11", mac)
	}
}

func TestNotAPi(t *testing.T) {
	_, err := New(&Options{Root: os.DirFS("testdata/x86")})
	if !errors.Is(err, ErrNotAPi) || !strings.Contains(err.Error(), "/proc/device-tree/model") {
		t.Errorf("New on a PC = %v, want ErrNotAPi naming /proc/device-tree/model", err)
	}
	_, err = New(&Options{Root: rpi4(fstest.MapFS{"proc/device-tree/model": {Data: []byte("Pine64 RockPro64 v2.1\x00")}})})
	if !errors.Is(err, ErrNotAPi) || !strings.Contains(err.Error(), "Pine64") {
		t.Errorf("New on another board = %v, want ErrNotAPi quoting its model", err)
	}
	_, err = New(&Options{Root: rpi4(fstest.MapFS{"proc/cpuinfo": {Data: []byte("processor\t: 0\n")}})})
	if err == nil || !strings.Contains(err.Error(), "Serial") {
		t.Errorf("New without a serial = %v, want an error about Serial", err)
	}
}

func pinByBCM(t *testing.T, b *Board, bcm int) board.PinInfo {
	t.Helper()
	for _, p := range b.Pins() {
		if p.BCM == bcm {
			return p
		}
	}
	t.Fatalf("no GPIO%d in Pins", bcm)
	return board.PinInfo{}
}

func TestPinsReportBusesAndWhatTheNodeDid(t *testing.T) {
	backend := boardtest.New(nil)
	b := newPi4(t, &Options{Hardware: backend.Hardware()})
	pins := b.Pins()
	if len(pins) != 28 || pins[0].Number != 3 || pins[0].BCM != 2 || pins[27].Number != 40 {
		t.Fatalf("Pins: %d pins, first %+v, last %+v; want the 28 header GPIOs in physical order", len(pins), pins[0], pins[len(pins)-1])
	}
	for bcm, want := range map[int]board.Direction{2: board.DirI2C, 3: board.DirI2C, 7: board.DirSPI, 8: board.DirSPI, 9: board.DirSPI, 10: board.DirSPI, 11: board.DirSPI, 14: board.DirUART, 15: board.DirUART} {
		if p := pinByBCM(t, b, bcm); p.Direction != want || !p.InUse {
			t.Errorf("GPIO%d = %+v, want in use as %s", bcm, p, want)
		}
	}
	if _, err := b.Hardware().GPIO(2); err == nil || !strings.Contains(err.Error(), "i2c1") {
		t.Errorf("GPIO(2) = %v, want refused as an I²C pin", err)
	}
	if p := pinByBCM(t, b, 17); p.Direction != board.DirInput || p.State != StateUnknown || p.InUse {
		t.Errorf("untouched GPIO17 = %+v, want a free input in state unknown", p)
	}

	out, err := b.Hardware().GPIO(17)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Out(gpio.High); err != nil {
		t.Fatal(err)
	}
	if l, _ := backend.Level(17); l != gpio.High {
		t.Errorf("the backend's GPIO17 is %v, want high", l)
	}
	if p := pinByBCM(t, b, 17); p.Direction != board.DirOutput || p.State != "high" {
		t.Errorf("GPIO17 after Out(high) = %+v", p)
	}

	in, err := b.Hardware().GPIO(21)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.In(gpio.PullUp, gpio.BothEdges); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.(gpio.EdgeWatcher); !ok {
		t.Error("a pin whose backend reports edges does not offer WatchEdges")
	}
	if err := backend.SetInput(21, gpio.Low); err != nil {
		t.Fatal(err)
	}
	if p := pinByBCM(t, b, 21); p.Direction != board.DirInput || p.State != "low" {
		t.Errorf("GPIO21 pressed = %+v, want an input reading low", p)
	}

	servo, err := b.Hardware().PWM(12)
	if err != nil {
		t.Fatal(err)
	}
	if err := servo.PWM(0.075, 50); err != nil {
		t.Fatal(err)
	}
	if p := pinByBCM(t, b, 12); p.Direction != board.DirPWM || p.State != "pwm_7" {
		t.Errorf("GPIO12 at 7.5 %% = %+v, want pwm_7", p)
	}
	if hz, duty, on := backend.PWMState(12); !on || hz != 50 || math.Abs(duty-0.075) > tol {
		t.Errorf("backend PWM on GPIO12 = %v Hz, %v, %v", hz, duty, on)
	}
}

func TestDebugUARTTakesNoHeaderPins(t *testing.T) {
	// A Pi 5 whose serial0 is the debug connector's UART.
	root := rpi4(fstest.MapFS{
		"dev/serial0":  {Mode: fs.ModeSymlink, Data: []byte("ttyAMA10")},
		"dev/ttyAMA10": {},
	})
	b := newPi4(t, &Options{Root: root})
	if p := pinByBCM(t, b, 14); p.Direction != board.DirInput || p.InUse {
		t.Errorf("GPIO14 with serial0 on the debug UART = %+v, want a free GPIO", p)
	}
	for _, p := range b.Scan() {
		if p.Type == "uart" {
			t.Errorf("debug UART reported as %+v", p)
		}
	}
	// serial0 pointing at the PL011 is the header UART.
	root = rpi4(fstest.MapFS{
		"dev/serial0": {Mode: fs.ModeSymlink, Data: []byte("ttyAMA0")},
		"dev/ttyAMA0": {},
	})
	if p := pinByBCM(t, newPi4(t, &Options{Root: root}), 14); p.Direction != board.DirUART {
		t.Errorf("GPIO14 with serial0 on ttyAMA0 = %+v, want the UART's", p)
	}
}

func TestClaimAndReleaseAll(t *testing.T) {
	backend := boardtest.New(nil)
	b := newPi4(t, &Options{Hardware: backend.Hardware()})
	if err := b.Claim(12, board.DirPWM, "pan_servo"); err != nil {
		t.Fatal(err)
	}
	var conflict *board.ConflictError
	if err := b.Claim(12, board.DirPWM, "tilt_servo"); !errors.As(err, &conflict) || conflict.UsedBy != "pan_servo" {
		t.Errorf("second claim of GPIO12 = %v, want a conflict with pan_servo", err)
	}
	// Devices share a bus: two drivers claim the I²C pins.
	if err := b.Claim(2, board.DirI2C, "imu"); err != nil {
		t.Errorf("claim of an I²C pin for I²C: %v", err)
	}
	if err := b.Claim(2, board.DirOutput, "led"); !errors.As(err, &conflict) {
		t.Errorf("claim of an I²C pin as output = %v, want a conflict", err)
	}
	if err := b.Claim(40, board.DirInput, "x"); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("claim of GPIO40 = %v, want ErrNotFound", err)
	}

	servo, _ := b.Hardware().PWM(12)
	if err := servo.PWM(0.1, 50); err != nil {
		t.Fatal(err)
	}
	led, _ := b.Hardware().GPIO(17)
	if err := led.Out(gpio.High); err != nil {
		t.Fatal(err)
	}
	button, _ := b.Hardware().GPIO(21)
	if err := button.In(gpio.PullUp, gpio.FallingEdge); err != nil {
		t.Fatal(err)
	}
	b.ReleaseAll()
	if _, _, on := backend.PWMState(12); on {
		t.Error("PWM on GPIO12 still running after ReleaseAll")
	}
	if p := pinByBCM(t, b, 12); p.InUse || p.State != "low" {
		t.Errorf("GPIO12 after ReleaseAll = %+v, want free and low", p)
	}
	// GPIO17's power-on pull is down, so the released LED pin reads low.
	if p := pinByBCM(t, b, 17); p.Direction != board.DirInput || p.State != "low" {
		t.Errorf("GPIO17 after ReleaseAll = %+v, want an input pulled low", p)
	}
	if p := pinByBCM(t, b, 21); p.Direction != board.DirInput || p.State != "high" {
		t.Errorf("reset button after ReleaseAll = %+v, want still an input pulled high", p)
	}
	if err := b.Claim(12, board.DirPWM, "tilt_servo"); err != nil {
		t.Errorf("claim after ReleaseAll: %v", err)
	}
}

func TestScan(t *testing.T) {
	bus := &twin.I2CBus{Name: "i2c-1"}
	bus.Attach(0x68, mpu6050.New())
	bus.Attach(0x40, pca9685.New())
	backend := boardtest.New(&boardtest.Options{I2C: map[int]i2c.Bus{1: bus}})
	b := newPi4(t, &Options{Hardware: backend.Hardware()})
	want := []board.Peripheral{
		{Type: "i2c", Address: "1:0x40", Description: "PCA9685 PWM controller", Responsive: true},
		{Type: "i2c", Address: "1:0x68", Description: "MPU6050 IMU", Responsive: true},
		{Type: "spi", Address: "0.0", Description: "SPI 0.0 enabled (/dev/spidev0.0); the device on it is not probed", Responsive: true},
		{Type: "spi", Address: "0.1", Description: "SPI 0.1 enabled (/dev/spidev0.1); the device on it is not probed", Responsive: true},
		{Type: "can", Address: "can0", Description: "CAN interface, 500000 bit/s (up)", Responsive: true},
		{Type: "uart", Address: "serial0", Description: "header UART on GPIO14/15 (/dev/serial0)", Responsive: true},
		{Type: "camera", Address: "csi0", Description: "Raspberry Pi Camera Module 3 (IMX708) on I²C 10-001a", Responsive: true},
		{Type: "camera", Address: "video1", Description: "USB camera: HD Pro Webcam C920", Responsive: true},
	}
	got := b.Scan()
	if len(got) != len(want) {
		t.Fatalf("Scan found %d peripherals, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("peripheral %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	// An identifier of the caller's replaces the default; a CAN interface
	// that is down is not responsive.
	anon := func(i2c.Bus, uint16) string { return "anonymous" }
	b = newPi4(t, &Options{Root: rpi4(fstest.MapFS{"sys/class/net/can0/operstate": {Data: []byte("down\n")}}), Hardware: backend.Hardware(), IdentifyI2C: anon})
	got = b.Scan()
	if got[0].Description != "anonymous" {
		t.Errorf("chip described as %q by a custom identifier", got[0].Description)
	}
	for _, p := range got {
		if p.Type == "can" && p.Responsive {
			t.Errorf("CAN interface that is down reported responsive: %+v", p)
		}
	}
}

func TestMetrics(t *testing.T) {
	files := fstest.MapFS{}
	root := overlay{base: os.DirFS("testdata/rpi4"), files: files}
	b := newPi4(t, &Options{Root: root, DiskUsage: func() (uint64, uint64, error) { return 32e9, 24e9, nil }})
	m := b.SystemMetrics()
	// The recorded /proc/stat: busy = user+nice+system+irq+softirq =
	// 40000+500+9500+0+1000 = 51000 of 351000+2000 = 353000 ticks since boot.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"cpu temperature", m.CPUTempC, 48.686},
		{"cpu usage since boot", m.CPUUsagePct, 51000.0 / 353000 * 100},
		{"memory usage", m.MemoryUsagePct, float64(3884396-3398072) / 3884396 * 100},
		{"load 1", m.Load1, 0.42},
		{"load 15", m.Load15, 0.25},
		{"uptime", m.Uptime.Seconds(), 86412.53},
		{"disk", m.DiskUsagePct, 25},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if m.MemoryTotalMB != 3793 || len(m.Errors) != 0 {
		t.Errorf("memory total %d MB, errors %v", m.MemoryTotalMB, m.Errors)
	}

	// One second later on four cores: 400 ticks, 100 of them busy.
	files["proc/stat"] = &fstest.MapFile{Data: []byte("cpu  40080 500 9510 300300 2000 0 1010 0 0 0\n")}
	if got := b.Metrics().CPUUsagePct; math.Abs(got-25) > 1e-6 {
		t.Errorf("cpu usage over the last interval = %v, want 25", got)
	}

	// A file that cannot be read is reported, and the rest still read.
	bare := newPi4(t, &Options{Root: rpi4(fstest.MapFS{"sys/class/thermal/thermal_zone0/temp": {Data: []byte("n/a")}})})
	m = bare.SystemMetrics()
	if m.CPUTempC != 0 || len(m.Errors) != 2 || !strings.HasPrefix(m.Errors[0], "cpu temperature") || !strings.HasPrefix(m.Errors[1], "disk") {
		t.Errorf("errors %q, temperature %v; want the temperature and disk errors", m.Errors, m.CPUTempC)
	}
	if m.MemoryUsagePct == 0 {
		t.Error("memory not read after a temperature error")
	}
}

// The board offers its camera: the CSI sensor first (the recorded Pi 4
// has an IMX708 and a USB webcam), through Options.OpenCamera.
func TestCameraProvider(t *testing.T) {
	b := newPi4(t, nil)
	if _, err := b.Camera(); !errors.Is(err, camera.ErrNotFitted) || !strings.Contains(err.Error(), "IMX708") {
		t.Errorf("without a camera backend: %v, want ErrNotFitted naming the sensor found", err)
	}
	var asked []board.Peripheral
	b = newPi4(t, &Options{OpenCamera: func(p board.Peripheral) (camera.Camera, error) {
		asked = append(asked, p)
		return nil, errors.New("opened")
	}})
	if _, err := b.Camera(); err == nil || err.Error() != "opened" {
		t.Fatalf("Camera(): %v, want OpenCamera's answer", err)
	}
	if len(asked) != 1 || asked[0].Address != "csi0" || !strings.Contains(asked[0].Description, "IMX708") {
		t.Errorf("OpenCamera got %+v, want the CSI camera csi0", asked)
	}
}
