package i2cid

import "github.com/saint-os/saint/hal/i2c"

// Descriptions of the chips Identify knows, as a node reports them.
const (
	MPU6050 = "MPU6050 IMU"
	MPU6500 = "MPU6500 IMU"
	MPU9250 = "MPU9250 IMU"
	PCA9685 = "PCA9685 PWM controller"
	INA219  = "INA219 power monitor"
	SSD1306 = "SSD1306 OLED display"
	Unknown = "unknown device"
)

// Identify names the chip that answers at addr on bus, or Unknown.
func Identify(bus i2c.Bus, addr uint16) string {
	switch addr {
	case 0x68, 0x69:
		if v, ok := readReg(bus, addr, 0x75, 1); ok {
			switch v[0] {
			case 0x68:
				return MPU6050
			case 0x70:
				return MPU6500
			case 0x71:
				return MPU9250
			}
		}
	case 0x3C, 0x3D:
		// The SSD1306 cannot be read back over I²C; its address is all
		// there is to go on.
		return SSD1306
	}
	// PCA9685: PRE_SCALE (0xFE) never reads below 3. 0x70 is its all-call
	// address, not a chip of its own.
	if addr >= 0x40 && addr <= 0x7F && addr != 0x70 {
		if v, ok := readReg(bus, addr, 0xFE, 1); ok && v[0] >= 3 {
			return PCA9685
		}
	}
	// INA219: the configuration register reads with RST (bit 15) and the
	// unused bit 14 clear, and is non-zero in any useful configuration (zero
	// is power-down). The INA219 has no register at 0xFE, so the PCA9685
	// probe above does not mistake it (it reads zero there).
	if addr >= 0x40 && addr <= 0x4F {
		if v, ok := readReg(bus, addr, 0x00, 2); ok && v[0]&0xC0 == 0 && v[0]|v[1] != 0 {
			return INA219
		}
	}
	return Unknown
}

func readReg(bus i2c.Bus, addr uint16, reg byte, n int) ([]byte, bool) {
	r := make([]byte, n)
	if err := bus.Tx(addr, []byte{reg}, r); err != nil {
		return nil, false
	}
	return r, true
}
