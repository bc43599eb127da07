package i2cid

import (
	"testing"

	"github.com/saint-os/saint/hal/i2c/i2ctest"
)

func TestIdentify(t *testing.T) {
	for _, tc := range []struct {
		addr uint16
		regs map[byte]byte
		want string
	}{
		{0x68, map[byte]byte{0x75: 0x68}, MPU6050},
		{0x68, map[byte]byte{0x75: 0x70}, MPU6500},
		{0x69, map[byte]byte{0x75: 0x71}, MPU9250},
		{0x68, map[byte]byte{0x75: 0x12}, Unknown},
		{0x41, map[byte]byte{0xFE: 0x79}, PCA9685},
		{0x70, map[byte]byte{0xFE: 0x79}, Unknown}, // all-call address
		{0x45, map[byte]byte{0x00: 0x39, 0x01: 0x9F}, INA219},
		{0x45, map[byte]byte{0x00: 0xFF, 0x01: 0xFF}, Unknown},
		{0x45, map[byte]byte{0x00: 0x00, 0x01: 0x00}, Unknown}, // powered down
		{0x50, nil, Unknown},
		{0x3D, nil, SSD1306},
	} {
		dev := &i2ctest.RegMap{Addr: tc.addr}
		for r, v := range tc.regs {
			dev.Regs[r] = v
		}
		if got := Identify(dev, tc.addr); got != tc.want {
			t.Errorf("0x%02x %v: %q, want %q", tc.addr, tc.regs, got, tc.want)
		}
	}
	if got := Identify(&i2ctest.RegMap{Addr: 0x10}, 0x68); got != Unknown {
		t.Errorf("silent address: %q", got)
	}
}
