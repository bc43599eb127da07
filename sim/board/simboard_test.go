package simboard

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/gpio"
)

func newBoard(t *testing.T, o *Options) *Board {
	t.Helper()
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scanString(ps []board.Peripheral) string {
	var s []string
	for _, p := range ps {
		s = append(s, fmt.Sprintf("%s %s %s %v", p.Type, p.Address, p.Description, p.Responsive))
	}
	return strings.Join(s, "\n")
}

func TestScanFindsExactlyTheProfilesDevices(t *testing.T) {
	want := map[Profile][]string{
		Head: {
			"i2c 1:0x40 PCA9685 PWM controller true",
			"i2c 1:0x68 MPU6050 IMU true",
			"camera csi0 Raspberry Pi Camera Module (CSI) true",
		},
		Arms: {
			"i2c 1:0x40 PCA9685 PWM controller true",
			"i2c 1:0x41 INA219 power monitor true",
			"uart ttyAMA0 Feetech smart-servo bus true",
		},
		ArmsCAN: {
			"i2c 1:0x41 INA219 power monitor true",
			"can can0 CAN bus 1 Mbit/s (MIT-mode actuators 1-5) true",
			"uart ttyAMA0 Feetech smart-servo bus true",
		},
		LimbCAN: {
			"can can0 CAN bus 1 Mbit/s (MIT-mode joint actuators) true",
		},
		Tracks: {
			"i2c 1:0x40 INA219 power monitor true",
			"i2c 1:0x41 PCA9685 PWM controller true",
			"i2c 1:0x44 INA219 power monitor true",
			"i2c 1:0x45 INA219 power monitor true",
		},
		Console: {
			"i2c 1:0x3c SSD1306 OLED display true",
		},
		Balance: {
			"spi 0.0 QMI8658 IMU true",
			"can can0 CAN bus 500 kbit/s (VESC 68, 56) true",
			"uart ttyAMA0 balance IO board link true",
		},
		Bare: nil,
	}
	for _, p := range Profiles() {
		t.Run(string(p), func(t *testing.T) {
			b := newBoard(t, &Options{Profile: p})
			got := scanString(b.Scan())
			if w := strings.Join(want[p], "\n"); got != w {
				t.Errorf("Scan():\n%s\nwant:\n%s", got, w)
			}
		})
	}
}

func TestScanReportsUnpluggedChip(t *testing.T) {
	b := newBoard(t, &Options{Profile: Arms})
	if err := b.SetI2CConnected(0x41, false); err != nil {
		t.Fatal(err)
	}
	got := scanString(b.Scan())
	if !strings.Contains(got, "i2c 1:0x41 INA219 power monitor false") {
		t.Errorf("unplugged INA219 not reported silent:\n%s", got)
	}
	if err := b.SetI2CConnected(0x50, false); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("SetI2CConnected on an empty address: %v", err)
	}
	_ = b.SetI2CConnected(0x41, true)
	if got := scanString(b.Scan()); !strings.Contains(got, "INA219 power monitor true") {
		t.Errorf("replugged INA219:\n%s", got)
	}
}

func TestI2CNACKAndDriverReads(t *testing.T) {
	b := newBoard(t, &Options{Profile: Head})
	bus, err := b.Hardware().I2C(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Tx(0x50, nil, make([]byte, 1)); err == nil {
		t.Error("empty address 0x50 acknowledged")
	}
	if _, err := b.Hardware().I2C(0); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("I2C(0): %v", err)
	}
	// An MPU6050 driver's start: WHO_AM_I, wake, read the accelerometer.
	id := make([]byte, 1)
	if err := bus.Tx(0x68, []byte{0x75}, id); err != nil || id[0] != 0x68 {
		t.Fatalf("WHO_AM_I = %#x, %v", id[0], err)
	}
	if err := bus.Tx(0x68, []byte{0x6B, 0x00}, nil); err != nil {
		t.Fatal(err)
	}
	acc := make([]byte, 6)
	if err := bus.Tx(0x68, []byte{0x3B}, acc); err != nil {
		t.Fatal(err)
	}
	if z := int16(uint16(acc[4])<<8 | uint16(acc[5])); z != 16384 {
		t.Errorf("resting ACCEL_Z = %d, want 16384 (1 g)", z)
	}
	if b.MPU6050() == nil || b.PCA9685() == nil || b.QMI8658() != nil {
		t.Error("twin accessors do not follow the profile")
	}
}

func TestArmsChipsAtRegisterLevel(t *testing.T) {
	b := newBoard(t, &Options{Profile: Arms})
	bus, _ := b.Hardware().I2C(1)
	r := make([]byte, 2)
	// PCA9685 MODE1 reads its reset value, takes a write, reads it back.
	if err := bus.Tx(0x40, []byte{0x00}, r[:1]); err != nil || r[0] != 0x11 {
		t.Errorf("MODE1 = %#x, %v; want 0x11", r[0], err)
	}
	_ = bus.Tx(0x40, []byte{0x00, 0x31}, nil)
	if _ = bus.Tx(0x40, []byte{0x00}, r[:1]); r[0] != 0x31 {
		t.Errorf("MODE1 after write = %#x, want 0x31", r[0])
	}
	// INA219 configuration register.
	if err := bus.Tx(0x41, []byte{0x00}, r); err != nil || r[0] != 0x39 || r[1] != 0x9F {
		t.Errorf("INA219 config = %#x, %v; want 0x399F", r, err)
	}
	// The Feetech bus: what the Pi writes reaches the device end.
	port, err := b.Hardware().UART(UART)
	if err != nil {
		t.Fatal(err)
	}
	peer, _ := b.UARTPeer(UART)
	var got []byte
	peer.Receive(func(p []byte, _ time.Time) { got = append(got, p...) })
	_, _ = port.Write([]byte{0xFF, 0xFF, 0x01, 0x02, 0x01, 0xFB})
	if len(got) != 6 {
		t.Errorf("servo bus received %x", got)
	}
}

func TestConsoleDisplayTakesCommands(t *testing.T) {
	b := newBoard(t, &Options{Profile: Console})
	bus, _ := b.Hardware().I2C(1)
	if err := bus.Tx(0x3C, []byte{0x00, 0xAF}, nil); err != nil {
		t.Fatal(err)
	}
	if !b.SSD1306().On() {
		t.Error("display not on after 0xAF")
	}
	for _, n := range []int{5, 6, 26} {
		if l, _ := b.Level(n); l != gpio.High {
			t.Errorf("button GPIO%d reads %v released, want high (pull-up)", n, l)
		}
	}
	_ = b.SetInput(26, gpio.Low)
	if l, _ := b.Level(26); l != gpio.Low {
		t.Error("pressed button reads high")
	}
}

func TestBalanceSPIAndCAN(t *testing.T) {
	b := newBoard(t, &Options{Profile: Balance})
	hw := b.Hardware()
	conn, err := hw.SPI(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 2)
	if err := conn.Tx([]byte{0x80, 0x00}, r); err != nil || r[1] != 0x05 {
		t.Errorf("QMI8658 WHO_AM_I = %#x, %v", r[1], err)
	}
	if _, err := hw.SPI(0, 1); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("SPI 0.1: %v", err)
	}
	bus, err := hw.CAN("can0")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	bus.Receive(func(can.Frame, time.Time) { n++ })
	if err := bus.Send(can.Frame{ID: 3<<8 | 68, Extended: true, Length: 4}); err != nil {
		t.Fatal(err)
	}
	cb, _ := b.CANBus("can0")
	if n != 1 || len(cb.Sent()) != 1 {
		t.Errorf("loopback delivered %d, recorded %d", n, len(cb.Sent()))
	}
	if _, err := newBoard(t, &Options{Profile: Head}).Hardware().CAN("can0"); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("head has can0: %v", err)
	}
	for _, p := range b.Pins() {
		if p.BCM >= 8 && p.BCM <= 11 && (p.Direction != board.DirSPI || p.UsedBy != "spi0") {
			t.Errorf("SPI pin %+v", p)
		}
	}
}

func TestPinsTable(t *testing.T) {
	b := newBoard(t, &Options{Profile: Head})
	pins := b.Pins()
	if len(pins) != 28 {
		t.Fatalf("%d pins, want 28", len(pins))
	}
	byBCM := map[int]board.PinInfo{}
	for _, p := range pins {
		byBCM[p.BCM] = p
	}
	for _, tc := range []struct {
		bcm, phys int
		dir       board.Direction
		state     string
		usedBy    string
	}{
		{2, 3, board.DirI2C, "high", "i2c1"},
		{3, 5, board.DirI2C, "high", "i2c1"},
		{14, 8, board.DirUART, "high", "uart0"},
		{15, 10, board.DirUART, "high", "uart0"},
		{21, 40, board.DirInput, "high", ""},
		{4, 7, board.DirInput, "high", ""},
		{17, 11, board.DirInput, "low", ""},
		{12, 32, board.DirInput, "low", ""},
	} {
		p := byBCM[tc.bcm]
		if p.Number != tc.phys || p.Direction != tc.dir || p.State != tc.state || p.UsedBy != tc.usedBy || p.Name != fmt.Sprintf("GPIO%d", tc.bcm) {
			t.Errorf("GPIO%d = %+v, want pin %d %s %s used by %q", tc.bcm, p, tc.phys, tc.dir, tc.state, tc.usedBy)
		}
	}
}

func TestHeadServosClaimsAndRelease(t *testing.T) {
	b := newBoard(t, &Options{Profile: Head})
	hw := b.Hardware()
	servos := map[string]int{"pan_servo": 12, "tilt_servo": 13, "roll_servo": 18}
	for name, bcm := range servos {
		if err := b.Claim(bcm, board.DirPWM, name); err != nil {
			t.Fatal(err)
		}
		p, err := hw.PWM(bcm)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.PWM(1.5e-3*50, 50); err != nil {
			t.Fatal(err)
		}
	}
	var ce *board.ConflictError
	if err := b.Claim(12, board.DirOutput, "led"); !errors.As(err, &ce) || ce.UsedBy != "pan_servo" {
		t.Errorf("conflicting claim: %v", err)
	}
	if err := b.Claim(12, board.DirPWM, "pan_servo"); err != nil {
		t.Errorf("same owner again: %v", err)
	}
	for _, p := range b.Pins() {
		if _, ok := servos[p.UsedBy]; ok && (p.State != "pwm_7" || p.Direction != board.DirPWM || !p.InUse) {
			t.Errorf("servo pin %+v", p)
		}
	}
	if f, d, on := b.PWMState(13); f != 50 || d != 0.075 || !on {
		t.Errorf("PWMState(13) = %v %v %v", f, d, on)
	}
	if _, err := hw.GPIO(2); err == nil {
		t.Error("I²C pin opened as GPIO")
	}
	if _, err := hw.PWM(28); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("PWM(28): %v", err)
	}
	b.ReleaseAll()
	for _, bcm := range servos {
		if _, _, on := b.PWMState(bcm); on {
			t.Errorf("GPIO%d still runs PWM after ReleaseAll", bcm)
		}
	}
	for _, p := range b.Pins() {
		if p.InUse && p.Direction != board.DirI2C && p.Direction != board.DirUART {
			t.Errorf("after ReleaseAll %+v", p)
		}
		if p.Direction == board.DirOutput || p.Direction == board.DirPWM {
			t.Errorf("after ReleaseAll %+v is not an input", p)
		}
	}
}

func TestResetButton(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	b := newBoard(t, &Options{Profile: Bare, Clock: clk})
	pin, err := b.Hardware().GPIO(ResetButton)
	if err != nil {
		t.Fatal(err)
	}
	_ = pin.In(gpio.PullUp, gpio.BothEdges)
	var ev []gpio.EdgeEvent
	pin.(gpio.EdgeWatcher).WatchEdges(func(e gpio.EdgeEvent) { ev = append(ev, e) })
	if pin.Read() != gpio.High {
		t.Fatal("released reset button reads low")
	}
	b.PressReset(true)
	clk.Advance(5 * time.Second)
	b.PressReset(false)
	if len(ev) != 2 || ev[0].Level != gpio.Low || ev[1].Level != gpio.High {
		t.Fatalf("edges %v", ev)
	}
	if held := ev[1].Time.Sub(ev[0].Time); held != 5*time.Second {
		t.Errorf("held %v, want 5s", held)
	}
}

func TestIdentity(t *testing.T) {
	a := newBoard(t, &Options{Profile: Head, NodeID: "sim-head-1"}).Info()
	if a.NodeID != "sim-head-1" || a.Model != Model || a.HardwareRev != "1.0" || a.MemoryMB != 4096 {
		t.Errorf("Info() = %+v", a)
	}
	if len(a.Serial) != 16 || !strings.HasPrefix(a.MACAddress, "dc:a6:32:") || len(a.MACAddress) != 17 {
		t.Errorf("serial %q mac %q", a.Serial, a.MACAddress)
	}
	if again := newBoard(t, &Options{Profile: Head, NodeID: "sim-head-1"}).Info(); again != a {
		t.Errorf("identity not deterministic: %+v vs %+v", again, a)
	}
	if other := newBoard(t, &Options{NodeID: "sim-arms-left"}).Info(); other.Serial == a.Serial || other.MACAddress == a.MACAddress {
		t.Error("two node ids share a serial or MAC")
	}
	s := newBoard(t, &Options{Serial: "10000000a1b2c3d4", MAC: "dc:a6:32:00:00:01"}).Info()
	if s.NodeID != "sim-10000000a1b2c3d4" || s.MACAddress != "dc:a6:32:00:00:01" {
		t.Errorf("from serial: %+v", s)
	}
	if _, err := New(&Options{Profile: "wheels"}); err == nil {
		t.Error("unknown profile accepted")
	}
	if b := newBoard(t, nil); b.Profile() != Bare {
		t.Errorf("nil options: profile %q", b.Profile())
	}
}

func TestMetricsDeterministic(t *testing.T) {
	m := newBoard(t, &Options{Profile: Tracks}).Metrics()
	if m != (board.Metrics{CPUTempC: 45, CPUUsagePct: 3, MemoryUsagePct: 18}) {
		t.Errorf("nominal metrics %+v", m)
	}
	s1 := newBoard(t, &Options{Profile: Tracks, Seed: 7}).Metrics()
	s2 := newBoard(t, &Options{Profile: Tracks, Seed: 7}).Metrics()
	s3 := newBoard(t, &Options{Profile: Tracks, Seed: 8}).Metrics()
	if s1 != s2 || s1 == s3 {
		t.Errorf("seeded metrics: %+v %+v %+v", s1, s2, s3)
	}
	if s1.CPUTempC < 40 || s1.CPUTempC > 50 || s1.CPUUsagePct <= 0 || s1.CPUUsagePct > 10 {
		t.Errorf("implausible metrics %+v", s1)
	}
}

// TestConcurrentUse exercises the board from several goroutines at once, as
// the node's reporter, a role's drivers and the physics do; run with -race.
func TestConcurrentUse(t *testing.T) {
	b := newBoard(t, &Options{Profile: Tracks})
	hw := b.Hardware()
	enc, _ := hw.GPIO(17)
	_ = enc.In(gpio.PullNoChange, gpio.BothEdges)
	var edges atomic.Int64
	enc.(gpio.EdgeWatcher).WatchEdges(func(gpio.EdgeEvent) {
		edges.Add(1)
		_ = b.Pins() // a watcher may look at the board
	})
	left, _ := hw.PWM(12)
	bus, _ := hw.I2C(1)
	done := make(chan struct{})
	work := []func(i int){
		func(i int) { _ = b.SetInput(17, gpio.Level(i%2 == 0)) },
		func(i int) { _ = left.PWM(float64(i%100)/100, 20000) },
		func(int) { _ = b.Pins(); _, _, _ = b.PWMState(12) },
		func(int) { _ = b.Scan() },
		func(int) { _ = bus.Tx(0x40, []byte{0x02}, make([]byte, 2)); b.INA219().Set(12, 0.5) },
		func(int) { _ = b.Claim(5, board.DirOutput, "left_enable"); b.ReleaseAll() },
	}
	for _, f := range work {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 200; i++ {
				f(i)
			}
		}()
	}
	for range work {
		<-done
	}
	if edges.Load() == 0 {
		t.Error("no encoder edges seen")
	}
}

func TestTracksBridgeEnablesArePulledDown(t *testing.T) {
	b := newBoard(t, &Options{Profile: Tracks})
	for _, n := range []int{5, 6} {
		if l, err := b.Level(n); err != nil || l != gpio.Low {
			t.Errorf("GPIO%d reads %v (%v) with nothing driving it; the harness pull-down must keep the bridge off", n, l, err)
		}
	}
	// A role drives the enable, then gives the pin back: it falls low again.
	pin, err := b.Hardware().GPIO(5)
	if err != nil {
		t.Fatal(err)
	}
	if err := pin.Out(gpio.High); err != nil {
		t.Fatal(err)
	}
	b.ReleaseAll()
	if err := pin.In(gpio.PullNoChange, gpio.NoEdge); err != nil {
		t.Fatal(err)
	}
	if l, _ := b.Level(5); l != gpio.Low {
		t.Errorf("released enable reads %v, want low", l)
	}
}

// With recording off the board's drivers still work, and the doubles under
// it keep no record of CAN frames, PWM settings or GPIO outputs.
func TestBoardWithoutRecording(t *testing.T) {
	b := newBoard(t, &Options{Profile: Balance})
	b.SetRecording(false)
	hw := b.Hardware()
	bus, err := hw.CAN("can0")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	bus.Receive(func(can.Frame, time.Time) { n++ })
	_ = bus.Send(can.Frame{ID: 3<<8 | 68, Extended: true, Length: 4})
	cb, _ := b.CANBus("can0")
	pin, err := hw.PWM(12)
	if err != nil {
		t.Fatal(err)
	}
	if err := pin.PWM(0.5, 50); err != nil {
		t.Fatal(err)
	}
	if f, d, on := b.PWMState(12); n != 1 || len(cb.Sent()) != 0 || !on || d != 0.5 || f != 50 {
		t.Errorf("delivered %d, recorded %d frames; PWM %v Hz %v on %v", n, len(cb.Sent()), f, d, on)
	}
}
