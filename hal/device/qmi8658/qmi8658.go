package qmi8658

import (
	"fmt"
	"math"

	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/spi"
)

// commandPolls bounds how many times Command reads STATUSINT waiting for a
// command to finish; the chip takes a few hundred µs, one SPI read takes
// tens of µs.
const commandPolls = 1000

// WhoAmI is what WHO_AM_I holds on a QMI8658.
const WhoAmI = 0x05

// StandardGravity converts g to m/s².
const StandardGravity = 9.80665

// AccelRange is the accelerometer full scale (CTRL2.aFS).
type AccelRange uint8

// Accelerometer full scales.
const (
	Accel2G  AccelRange = iota // 16384 LSB/g
	Accel4G                    // 8192 LSB/g
	Accel8G                    // 4096 LSB/g
	Accel16G                   // 2048 LSB/g
)

// String returns "±2g".
func (r AccelRange) String() string { return fmt.Sprintf("±%dg", 2<<r) }

// GyroRange is the gyroscope full scale (CTRL3.gFS).
type GyroRange uint8

// Gyroscope full scales.
const (
	Gyro16   GyroRange = iota // ±16 °/s, 2048 LSB/(°/s)
	Gyro32                    // 1024
	Gyro64                    // 512
	Gyro128                   // 256
	Gyro256                   // 128
	Gyro512                   // 64
	Gyro1024                  // 32
	Gyro2048                  // 16
)

// String returns "±16°/s".
func (r GyroRange) String() string { return fmt.Sprintf("±%d°/s", 16<<r) }

// ODR is an output data rate code (CTRL2.aODR, CTRL3.gODR). The nominal
// rates hold for the accelerometer alone; with the gyroscope enabled both
// run at the nominal rate × 0.8968 (ODR1000 gives 896.8 Hz).
type ODR uint8

// Output data rates.
const (
	ODR8000 ODR = iota
	ODR4000
	ODR2000
	ODR1000
	ODR500
	ODR250
	ODR125
	ODR62_5
	ODR31_25
	ODRLowPower128 ODR = 12 // accelerometer only
	ODRLowPower21  ODR = 13
	ODRLowPower11  ODR = 14
	ODRLowPower3   ODR = 15
)

// Hz returns the nominal rate.
func (o ODR) Hz() float64 {
	switch {
	case o <= ODR31_25:
		return 8000 / float64(int(1)<<o)
	case o == ODRLowPower128:
		return 128
	case o == ODRLowPower21:
		return 21
	case o == ODRLowPower11:
		return 11
	case o == ODRLowPower3:
		return 3
	}
	return 0
}

// Opts configures a Dev. Nil Opts mean DefaultOpts().
type Opts struct {
	AccelRange AccelRange
	AccelODR   ODR
	GyroRange  GyroRange
	GyroODR    ODR
	// DataReadyInterrupt drives DRDY on INT2.
	DataReadyInterrupt bool
	// INT is the GPIO INT2 is wired to, or nil. New sets it as an input
	// reporting rising edges.
	INT gpio.PinIO
}

// DefaultOpts returns the balance loop's configuration: ±4 g, ±512 °/s, both at
// ODR1000 (896.8 Hz in 6DOF mode), data ready on INT2.
func DefaultOpts() Opts {
	return Opts{
		AccelRange:         Accel4G,
		AccelODR:           ODR1000,
		GyroRange:          Gyro512,
		GyroODR:            ODR1000,
		DataReadyInterrupt: true,
	}
}

// Sample is one reading in SI units, in the chip's axes.
type Sample struct {
	Accel [3]float64 // m/s²
	Gyro  [3]float64 // rad/s
	TempC float64
}

// Dev is a QMI8658 on one SPI chip select. Methods are not safe for
// concurrent use.
type Dev struct {
	conn     spi.Conn
	opts     Opts
	revision byte
	buf      [15]byte
}

// New checks that a QMI8658 answers on conn, configures and enables it.
func New(conn spi.Conn, opts *Opts) (*Dev, error) {
	if opts == nil {
		o := DefaultOpts()
		opts = &o
	}
	d := &Dev{conn: conn, opts: *opts}
	switch {
	case d.opts.AccelRange > Accel16G:
		return nil, fmt.Errorf("qmi8658: AccelRange %d out of range 0–3", d.opts.AccelRange)
	case d.opts.GyroRange > Gyro2048:
		return nil, fmt.Errorf("qmi8658: GyroRange %d out of range 0–7", d.opts.GyroRange)
	case d.opts.AccelODR.Hz() == 0:
		return nil, fmt.Errorf("qmi8658: AccelODR code %d is reserved", d.opts.AccelODR)
	case d.opts.GyroODR > ODR31_25:
		return nil, fmt.Errorf("qmi8658: GyroODR code %d: the gyroscope takes 0–8", d.opts.GyroODR)
	}
	id, err := d.readReg(regWhoAmI, "WHO_AM_I")
	if err != nil {
		return nil, err
	}
	if id != WhoAmI {
		return nil, &WhoAmIError{Got: id}
	}
	ctrl1 := byte(ctrl1AI)
	ctrl7 := byte(ctrl7AEn | ctrl7GEn)
	if d.opts.DataReadyInterrupt {
		ctrl1 |= ctrl1INT2
	} else {
		ctrl7 |= ctrl7DRDYDis
	}
	if err := d.write("CTRL1", regCtrl1, ctrl1); err != nil {
		return nil, err
	}
	if d.revision, err = d.readReg(regRevisionID, "REVISION_ID"); err != nil {
		return nil, err
	}
	ctrl2 := byte(d.opts.AccelRange)<<4 | byte(d.opts.AccelODR)
	ctrl3 := byte(d.opts.GyroRange)<<4 | byte(d.opts.GyroODR)
	// CTRL4 is reserved (0); CTRL5 = 0: both low-pass filters off.
	if err := d.write("CTRL2..CTRL5", regCtrl2, ctrl2, ctrl3, 0, 0); err != nil {
		return nil, err
	}
	// INT1 is not wired: CTRL9 commands report completion in STATUSINT.
	if err := d.write("CTRL8", regCtrl8, ctrl8HandshakeStatusInt); err != nil {
		return nil, err
	}
	if err := d.write("CTRL7", regCtrl7, ctrl7); err != nil {
		return nil, err
	}
	if d.opts.INT != nil {
		if err := d.opts.INT.In(gpio.PullDown, gpio.RisingEdge); err != nil {
			return nil, fmt.Errorf("qmi8658: INT2 pin %s: %w", d.opts.INT.Name(), err)
		}
	}
	return d, nil
}

// WhoAmIError is returned by New when the chip is not a QMI8658.
type WhoAmIError struct{ Got byte }

func (e *WhoAmIError) Error() string {
	return fmt.Sprintf("qmi8658: WHO_AM_I is 0x%02x, want 0x%02x (a QMI8658)", e.Got, WhoAmI)
}

// String returns "QMI8658".
func (d *Dev) String() string { return "QMI8658" }

// Revision returns REVISION_ID as read by New (0x7C on a QMI8658A).
func (d *Dev) Revision() byte { return d.revision }

// INT returns the pin INT2 is wired to, or nil.
func (d *Dev) INT() gpio.PinIO { return d.opts.INT }

// SampleRate returns the output data rate in Hz: the gyroscope's clock
// drives both sensors in 6DOF mode.
func (d *Dev) SampleRate() float64 { return d.opts.GyroODR.Hz() * 0.8968 }

// Sense reads temperature, accelerometer and gyroscope in one burst.
func (d *Dev) Sense() (Sample, error) {
	w := [15]byte{readBit | regTempL}
	if err := d.conn.Tx(w[:], d.buf[:]); err != nil {
		return Sample{}, fmt.Errorf("qmi8658: reading TEMP_L..GZ_H: %w", err)
	}
	b := d.buf[1:]
	s16 := func(i int) float64 { return float64(int16(uint16(b[i]) | uint16(b[i+1])<<8)) }
	var s Sample
	s.TempC = s16(0) / 256
	a := StandardGravity / float64(int(1)<<(14-d.opts.AccelRange))
	g := math.Pi / 180 / float64(int(2048)>>d.opts.GyroRange)
	for i := 0; i < 3; i++ {
		s.Accel[i] = s16(2+2*i) * a
		s.Gyro[i] = s16(8+2*i) * g
	}
	return s, nil
}

// DataReady reads STATUS0 and reports whether both sensors have a sample
// not yet read.
func (d *Dev) DataReady() (bool, error) {
	v, err := d.readReg(regStatus0, "STATUS0")
	return v&(status0ADA|status0GDA) == status0ADA|status0GDA, err
}

// Command runs a CTRL9 host command with the datasheet's handshake: write
// it to CTRL9, read STATUSINT until CmdDone (bit 7), then acknowledge with
// CTRL_CMD_ACK (0) so CmdDone clears.
func (d *Dev) Command(cmd byte) error {
	if err := d.write("CTRL9", regCtrl9, cmd); err != nil {
		return err
	}
	for i := 0; i < commandPolls; i++ {
		v, err := d.readReg(regStatusInt, "STATUSINT")
		if err != nil {
			return err
		}
		if v&statusIntCmdDone != 0 {
			return d.write("CTRL9", regCtrl9, cmdAck)
		}
	}
	return fmt.Errorf("qmi8658: CTRL9 command 0x%02x not done after %d reads of STATUSINT", cmd, commandPolls)
}

// Disable turns both sensors off (CTRL7 = 0).
func (d *Dev) Disable() error { return d.write("CTRL7", regCtrl7, 0) }

// Reset issues a soft reset (0xB0 to RESET): every register returns to its
// power-on value. The chip needs about 15 ms; call New again after that.
func (d *Dev) Reset() error { return d.write("RESET", regReset, resetCmd) }

func (d *Dev) readReg(reg byte, name string) (byte, error) {
	var r [2]byte
	if err := d.conn.Tx([]byte{readBit | reg, 0}, r[:]); err != nil {
		return 0, fmt.Errorf("qmi8658: reading %s: %w", name, err)
	}
	return r[1], nil
}

func (d *Dev) write(name string, reg byte, vals ...byte) error {
	if err := d.conn.Tx(append([]byte{reg}, vals...), nil); err != nil {
		return fmt.Errorf("qmi8658: writing %s: %w", name, err)
	}
	return nil
}
