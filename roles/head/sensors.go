package head

import (
	"math"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/device/mpu6050"
	"github.com/saint-os/saint/hal/gpio"
)

// headSensors publishes the head's MPU6050 on the sensors topic: one
// reading per data-ready edge of its INT pin (gpio_mapping imu_int), or on
// a timer at sensors_rate_hz when the pin is not mapped. Without the chip
// (not configured, or not answering) the readings go out marked invalid at
// that rate, so a listener sees the sensor is missing rather than silence.
type headSensors struct {
	h       *Head
	imu     *mpu6050.Dev
	stopINT func()
	stopped bool
}

func (s *headSensors) start(h *Head) {
	s.h, s.stopped = h, false
	hz := h.params.SensorsRateHz
	if hz <= 0 || hz > 1000 {
		h.Env.Log.Warn("sensors_rate_hz out of 0–1000 Hz, using 50", "sensors_rate_hz", hz)
		hz = 50
	}
	for _, d := range h.Env.Config.I2CDevices {
		if d.Driver == "mpu6050" {
			s.openIMU(d.Bus, d.Address, hz)
			break
		}
	}
	if s.stopINT == nil {
		h.Every(time.Duration(float64(time.Second)/hz), s.publish)
	}
}

// openIMU starts the MPU6050 sampling at hz, raising its INT pin per
// sample when gpio_mapping has imu_int.
func (s *headSensors) openIMU(busNum, addr int, hz float64) {
	h := s.h
	bus, err := h.Env.Board.Hardware().I2C(busNum)
	if err != nil {
		h.Env.Log.Warn("imu bus: sensor readings will be invalid", "bus", busNum, "err", err)
		return
	}
	o := mpu6050.DefaultOpts()
	o.Addr = uint16(addr)
	// A 44 Hz filter and the 1 kHz gyro rate divided down to the sensors
	// rate.
	o.DLPF = mpu6050.DLPF44
	o.SampleRateDivider = uint8(max(0, min(255, math.Round(1000/hz)-1)))
	intPin := h.Pins.Input("imu_int")
	watcher, edges := intPin.(gpio.EdgeWatcher)
	if edges {
		o.DataReadyInterrupt, o.INT = true, intPin
	}
	imu, err := mpu6050.New(bus, &o)
	if err != nil {
		h.Env.Log.Warn("imu not started: sensor readings will be invalid", "err", err)
		return
	}
	s.imu = imu
	if edges {
		// Edges come on any goroutine: the read runs on the executor.
		s.stopINT = watcher.WatchEdges(func(e gpio.EdgeEvent) {
			if e.Level == gpio.High {
				h.Env.Exec.Post(s.publish)
			}
		})
	}
}

// publish reads the IMU and publishes its readings.
func (s *headSensors) publish() {
	if s.stopped {
		return
	}
	h := s.h
	var sm mpu6050.Sample
	valid := false
	if s.imu != nil {
		var err error
		sm, err = s.imu.Sense()
		valid = err == nil
	}
	r := func(name string, v float64, unit string) msg.SensorReading {
		return msg.SensorReading{Name: name, Value: v, Unit: unit, Valid: valid}
	}
	a, g := sm.Accel, sm.Gyro
	_ = h.Env.Bus.Publish(h.Env.Prefix+"/sensors", msg.SensorReadings{
		Header: msg.Header{Stamp: msg.TimeOf(h.Env.Exec.Now()), FrameID: "head_imu"},
		Readings: []msg.SensorReading{
			r("imu_accel_x", a[0], "m/s^2"), r("imu_accel_y", a[1], "m/s^2"), r("imu_accel_z", a[2], "m/s^2"),
			r("imu_gyro_x", g[0], "rad/s"), r("imu_gyro_y", g[1], "rad/s"), r("imu_gyro_z", g[2], "rad/s"),
			// Gravity's direction in the head frame: pitch positive nose
			// down, roll positive right ear down, as the head's axes.
			r("imu_pitch", math.Atan2(-a[0], math.Hypot(a[1], a[2])), "rad"),
			r("imu_roll", math.Atan2(a[1], a[2]), "rad"),
			r("imu_temperature", sm.TempC, "degC"),
		},
	})
}

func (s *headSensors) stop() {
	s.stopped = true
	if s.stopINT != nil {
		s.stopINT()
		s.stopINT = nil
	}
	s.imu = nil
}
