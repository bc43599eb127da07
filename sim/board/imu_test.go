package simboard

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/device/mpu6050"
	"github.com/saint-os/saint/hal/device/qmi8658"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
)

// countRises watches a header pin the way a driver's owner would.
func countRises(t *testing.T, b *Board, bcm int) (pin gpio.PinIO, rises func() int) {
	t.Helper()
	p, err := b.Hardware().GPIO(bcm)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	w, ok := p.(gpio.EdgeWatcher)
	if !ok {
		t.Fatalf("GPIO%d does not report edges", bcm)
	}
	w.WatchEdges(func(e gpio.EdgeEvent) {
		if e.Level {
			n++
		}
	})
	return p, func() int { return n }
}

// The head IMU's driver, on the board's I²C bus, with its INT pin on
// GPIO17: one rising edge per sample at the configured 100 Hz.
func TestHeadIMUDataReadyPin(t *testing.T) {
	ex := executor.NewVirtual()
	b := newBoard(t, &Options{Profile: Head, Exec: ex, Seed: 4})
	pin, rises := countRises(t, b, MPU6050INT)
	bus, err := b.Hardware().I2C(1)
	if err != nil {
		t.Fatal(err)
	}
	var samples []mpu6050.Sample
	ex.Post(func() {
		o := mpu6050.DefaultOpts()
		o.INT = pin
		d, err := mpu6050.New(bus, &o)
		if err != nil {
			t.Error(err)
			return
		}
		ex.Every(10*time.Millisecond, func() {
			if s, err := d.Sense(); err == nil {
				samples = append(samples, s)
			}
		})
	})
	if err := ex.RunFor(t.Context(), 500*time.Millisecond+time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if n := rises(); n != 50 {
		t.Errorf("%d data-ready edges on GPIO%d in 500 ms at 100 Hz, want 50", n, MPU6050INT)
	}
	// Seeded noise: readings of a still chip scatter around +g.
	if len(samples) < 40 {
		t.Fatalf("%d samples", len(samples))
	}
	if samples[10].Accel == samples[11].Accel {
		t.Error("a seeded board's IMU reads without noise")
	}
	if z := samples[10].Accel[2]; z < 9 || z > 10.6 {
		t.Errorf("accel z %v, want about 9.81", z)
	}
}

// The balance IMU on SPI 0.0 with INT2 on GPIO25.
func TestBalanceIMUDataReadyPin(t *testing.T) {
	ex := executor.NewVirtual()
	b := newBoard(t, &Options{Profile: Balance, Exec: ex})
	pin, rises := countRises(t, b, QMI8658INT2)
	conn, err := b.Hardware().SPI(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ex.Post(func() {
		o := qmi8658.DefaultOpts()
		o.INT = pin
		if _, err := qmi8658.New(conn, &o); err != nil {
			t.Error(err)
		}
	})
	if err := ex.RunFor(t.Context(), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// 896.8 Hz for 50 ms: 44 samples.
	if n := rises(); n != 44 {
		t.Errorf("%d data-ready edges on GPIO%d in 50 ms, want 44", n, QMI8658INT2)
	}
}

// Without an executor the pins stay undriven and the chips answer every
// read with fresh values, as before.
func TestNoExecutorNoInterrupts(t *testing.T) {
	b := newBoard(t, &Options{Profile: Head})
	bus, _ := b.Hardware().I2C(1)
	d, err := mpu6050.New(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Sense()
	if err != nil || s.Accel[2] < 9.8 || s.Accel[2] > 9.82 {
		t.Errorf("Sense = %+v, %v", s, err)
	}
	if lvl, _ := b.Level(MPU6050INT); lvl != gpio.Low {
		t.Errorf("GPIO%d = %v, want its power-on pull-down", MPU6050INT, lvl)
	}
}

// BenchmarkBalanceIMULoop is the cost, per sample, of the balance IMU in the
// simulator: the twin's sample tick and INT2 edges on the executor, the
// board's pin, and one driver read per rising edge. b.N samples at 896.8 Hz.
func BenchmarkBalanceIMULoop(b *testing.B) {
	ex := executor.NewVirtual()
	brd, err := New(&Options{Profile: Balance, Exec: ex, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	hw := brd.Hardware()
	conn, _ := hw.SPI(0, 0)
	pin, _ := hw.GPIO(QMI8658INT2)
	reads := 0
	ex.Post(func() {
		o := qmi8658.DefaultOpts()
		o.INT = pin
		imu, err := qmi8658.New(conn, &o)
		if err != nil {
			b.Error(err)
			return
		}
		pin.(gpio.EdgeWatcher).WatchEdges(func(e gpio.EdgeEvent) {
			if e.Level {
				if _, err := imu.Sense(); err == nil {
					reads++
				}
			}
		})
	})
	b.ReportAllocs()
	b.ResetTimer()
	period := time.Duration(math.Round(1e9 / 896.8))
	if err := ex.RunFor(b.Context(), time.Duration(b.N)*period); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if reads < b.N-1 {
		b.Fatalf("%d reads for %d samples", reads, b.N)
	}
}
