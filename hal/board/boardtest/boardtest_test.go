package boardtest

import (
	"errors"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/i2c/i2ctest"
	"github.com/saint-os/saint/hal/pwm/pwmtest"
)

func pinInfo(t *testing.T, b *Board, bcm int) board.PinInfo {
	t.Helper()
	for _, p := range b.Pins() {
		if p.BCM == bcm {
			return p
		}
	}
	t.Fatalf("GPIO%d not in Pins()", bcm)
	return board.PinInfo{}
}

func TestDefaults(t *testing.T) {
	b := New(nil)
	pins := b.Pins()
	if len(pins) != 28 {
		t.Fatalf("%d pins, want 28", len(pins))
	}
	for i := 1; i < len(pins); i++ {
		if pins[i].Number <= pins[i-1].Number {
			t.Fatalf("pins not ordered by physical number: %d after %d", pins[i].Number, pins[i-1].Number)
		}
	}
	// GPIO4 (pin 7) is pulled up at reset, GPIO17 (pin 11) down.
	if p := pinInfo(t, b, 4); p.Number != 7 || p.State != "high" || p.Direction != board.DirInput || p.Name != "GPIO4" {
		t.Errorf("GPIO4 = %+v", p)
	}
	if p := pinInfo(t, b, 17); p.Number != 11 || p.State != "low" || p.InUse {
		t.Errorf("GPIO17 = %+v", p)
	}
	if _, err := b.Hardware().I2C(1); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("I2C(1) on a bare board: %v", err)
	}
}

func TestClaims(t *testing.T) {
	b := New(&Options{Buses: map[int]BusPin{2: {board.DirI2C, "i2c1"}, 3: {board.DirI2C, "i2c1"}}})
	if err := b.Claim(12, board.DirPWM, "pan_servo"); err != nil {
		t.Fatal(err)
	}
	if err := b.Claim(12, board.DirPWM, "pan_servo"); err != nil {
		t.Errorf("claiming again for the same owner: %v", err)
	}
	err := b.Claim(12, board.DirOutput, "led")
	var ce *board.ConflictError
	if !errors.As(err, &ce) || ce.Pin != 12 || ce.UsedBy != "pan_servo" || ce.Wanted != "led" {
		t.Errorf("conflicting claim: %v", err)
	}
	if p := pinInfo(t, b, 12); !p.InUse || p.UsedBy != "pan_servo" {
		t.Errorf("claimed pin = %+v", p)
	}
	// Devices share the I²C pins, but nobody may take them as GPIO.
	if err := b.Claim(2, board.DirI2C, "imu"); err != nil {
		t.Errorf("claim of an I²C pin for I²C: %v", err)
	}
	if err := b.Claim(2, board.DirOutput, "led"); !errors.As(err, &ce) || ce.UsedBy != "i2c1" {
		t.Errorf("claim of an I²C pin as output: %v", err)
	}
	if _, err := b.Hardware().GPIO(3); err == nil {
		t.Error("opened an I²C pin as GPIO")
	}
	if p := pinInfo(t, b, 3); p.Direction != board.DirI2C || !p.InUse || p.UsedBy != "i2c1" || p.State != "high" {
		t.Errorf("I²C pin = %+v", p)
	}
	if err := b.Claim(40, board.DirInput, "x"); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("claim of a pin the board lacks: %v", err)
	}
	if err := b.Claim(5, board.DirInput, ""); err == nil {
		t.Error("claim without a user accepted")
	}
	b.ReleaseAll()
	if p := pinInfo(t, b, 12); p.InUse {
		t.Errorf("after ReleaseAll: %+v", p)
	}
	if p := pinInfo(t, b, 2); !p.InUse {
		t.Error("ReleaseAll took the I²C pins from the bus")
	}
	if err := b.Claim(12, board.DirOutput, "led"); err != nil {
		t.Errorf("claim after ReleaseAll: %v", err)
	}
}

func TestPWMAndOutputState(t *testing.T) {
	b := New(nil)
	hw := b.Hardware()
	pan, err := hw.PWM(12)
	if err != nil {
		t.Fatal(err)
	}
	if err := pan.PWM(1.5/20, 50); err != nil {
		t.Fatal(err)
	}
	if p := pinInfo(t, b, 12); p.Direction != board.DirPWM || p.State != "pwm_7" || p.Number != 32 {
		t.Errorf("servo pin = %+v, want pwm_7 on pin 32", p)
	}
	if f, d, on := b.PWMState(12); f != 50 || d != 0.075 || !on {
		t.Errorf("PWMState(12) = %v %v %v", f, d, on)
	}
	if err := pan.PWM(2, 50); err == nil {
		t.Error("duty 2 accepted")
	}
	led, _ := hw.GPIO(5)
	_ = led.Out(gpio.High)
	if p := pinInfo(t, b, 5); p.Direction != board.DirOutput || p.State != "high" {
		t.Errorf("output pin = %+v", p)
	}
	if l, _ := b.Level(5); l != gpio.High {
		t.Error("Level(5) is not the driven level")
	}
	// Opening a PWM pin as GPIO switches it out of PWM.
	g, _ := hw.GPIO(12)
	_ = g.Out(gpio.Low)
	if _, _, on := b.PWMState(12); on {
		t.Error("PWM still running after the pin became an output")
	}
	_ = pan.PWM(0.5, 1000)
	b.ReleaseAll()
	if _, _, on := b.PWMState(12); on {
		t.Error("PWM running after ReleaseAll")
	}
	for _, bcm := range []int{5, 12} {
		if p := pinInfo(t, b, bcm); p.Direction != board.DirInput {
			t.Errorf("GPIO%d after ReleaseAll = %+v, want input", bcm, p)
		}
	}
	_ = pan.PWM(0.5, 1000)
	_ = pan.Halt()
	if p := pinInfo(t, b, 12); p.Direction != board.DirPWM || p.State != "low" {
		t.Errorf("halted PWM pin = %+v", p)
	}
}

func TestPWMStateString(t *testing.T) {
	for _, tc := range []struct {
		duty float64
		on   bool
		want string
	}{
		{0.075, true, "pwm_7"}, {0.5, true, "pwm_50"}, {0.29, true, "pwm_29"}, {1, true, "pwm_100"}, {0, true, "pwm_0"}, {0.5, false, "low"},
	} {
		if got := PWMStateString(pwmtest.Setting{Duty: tc.duty, FreqHz: 50, On: tc.on}); got != tc.want {
			t.Errorf("duty %v on %v: %q, want %q", tc.duty, tc.on, got, tc.want)
		}
	}
}

func TestInputsAndEdges(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	b := New(&Options{Clock: clk, Pulls: map[int]gpio.Pull{21: gpio.PullUp}})
	btn, err := b.Hardware().GPIO(21)
	if err != nil {
		t.Fatal(err)
	}
	_ = btn.In(gpio.PullUp, gpio.BothEdges)
	var got []gpio.EdgeEvent
	btn.(gpio.EdgeWatcher).WatchEdges(func(e gpio.EdgeEvent) { got = append(got, e) })
	clk.Advance(time.Second)
	_ = b.SetInput(21, gpio.Low)
	clk.Advance(5 * time.Second)
	_ = b.ReleaseInput(21)
	if len(got) != 2 || got[0].Level != gpio.Low || got[1].Time.Sub(got[0].Time) != 5*time.Second {
		t.Fatalf("edges %v", got)
	}
	// ReleaseAll leaves inputs watching.
	b.ReleaseAll()
	_ = b.SetInput(21, gpio.Low)
	if len(got) != 3 {
		t.Error("ReleaseAll stopped an input's edge detection")
	}
	if err := b.SetInput(99, gpio.Low); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("SetInput(99) = %v", err)
	}
}

func TestBusesAndPeripherals(t *testing.T) {
	dev := &i2ctest.RegMap{Addr: 0x68}
	dev.Regs[0x75] = 0x68
	periph := []board.Peripheral{{Type: "i2c", Address: "1:0x68", Description: "MPU6050 IMU", Responsive: true}}
	b := New(&Options{
		Info:        board.Info{NodeID: "test-1"},
		I2C:         map[int]i2c.Bus{1: dev},
		Peripherals: periph,
		Metrics:     board.Metrics{CPUTempC: 40},
	})
	bus, err := b.Hardware().I2C(1)
	if err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 1)
	if err := bus.Tx(0x68, []byte{0x75}, r); err != nil || r[0] != 0x68 {
		t.Errorf("WHO_AM_I through the board: %v %#x", err, r[0])
	}
	s := b.Scan()
	s[0].Description = "changed"
	if b.Scan()[0].Description != "MPU6050 IMU" {
		t.Error("Scan returned the board's own slice")
	}
	if b.Info().NodeID != "test-1" || b.Metrics().CPUTempC != 40 {
		t.Error("Info or Metrics not as configured")
	}
	for name, err := range map[string]error{
		"spi":  func() error { _, err := b.Hardware().SPI(0, 0); return err }(),
		"can":  func() error { _, err := b.Hardware().CAN("can0"); return err }(),
		"uart": func() error { _, err := b.Hardware().UART("ttyAMA0"); return err }(),
	} {
		if !errors.Is(err, board.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}

func TestSetInputAtStampsTheEdge(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	b := New(&Options{Clock: clk})
	enc, err := b.Hardware().GPIO(17)
	if err != nil {
		t.Fatal(err)
	}
	_ = enc.In(gpio.Float, gpio.BothEdges)
	var got []gpio.EdgeEvent
	enc.(gpio.EdgeWatcher).WatchEdges(func(e gpio.EdgeEvent) { got = append(got, e) })
	clk.Advance(time.Millisecond)
	mid := clk.Now().Add(-300 * time.Microsecond)
	if err := b.SetInputAt(17, gpio.High, mid); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Time.Equal(mid) || got[0].Level != gpio.High {
		t.Fatalf("edges %v, want one rising edge at %v", got, mid)
	}
	if err := b.SetInputAt(99, gpio.Low, mid); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("SetInputAt(99) = %v", err)
	}
}
