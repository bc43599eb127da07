package pi

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/device/i2cid"
)

// scanBus is the I²C bus of the header's SDA/SCL pins.
const scanBus = 1

// Scan implements board.Board. See the package doc for what is probed.
func (b *Board) Scan() []board.Peripheral {
	var out []board.Peripheral
	out = append(out, b.scanI2C()...)
	out = append(out, b.scanSPI()...)
	out = append(out, b.scanCAN()...)
	out = append(out, b.scanUART()...)
	out = append(out, b.scanCameras()...)
	return out
}

// scanI2C probes bus 1 with a one-byte read at every address from 0x03 to
// 0x77, as i2cdetect -r does: a write probe could change a chip's state,
// a read of one byte only moves its register pointer.
func (b *Board) scanI2C() []board.Peripheral {
	if b.hw == nil {
		return nil
	}
	bus, err := b.hw.I2C(scanBus)
	if err != nil {
		return nil
	}
	var out []board.Peripheral
	probe := make([]byte, 1)
	for addr := uint16(0x03); addr <= 0x77; addr++ {
		if bus.Tx(addr, nil, probe) != nil {
			continue
		}
		identify := b.identify
		if identify == nil {
			identify = i2cid.Identify
		}
		desc := identify(bus, addr)
		out = append(out, board.Peripheral{
			Type:        "i2c",
			Address:     fmt.Sprintf("%d:0x%02x", scanBus, addr),
			Description: desc,
			Responsive:  true,
		})
	}
	return out
}

// glob returns the names matching pattern in root, sorted; a bad pattern
// or unreadable directory gives none.
func (b *Board) glob(pattern string) []string {
	m, _ := fs.Glob(b.root, pattern)
	sort.Strings(m)
	return m
}

// scanSPI lists the enabled SPI chip selects. Nothing is sent: an SPI
// device cannot be probed without knowing what it is.
func (b *Board) scanSPI() []board.Peripheral {
	var out []board.Peripheral
	for _, p := range b.glob("dev/spidev*") {
		addr := strings.TrimPrefix(path.Base(p), "spidev")
		out = append(out, board.Peripheral{
			Type:        "spi",
			Address:     addr,
			Description: "SPI " + addr + " enabled (/" + p + "); the device on it is not probed",
			Responsive:  true,
		})
	}
	return out
}

// arphrdCAN is the Linux interface type of a CAN interface.
const arphrdCAN = "280"

// scanCAN lists CAN interfaces; one that is down (not configured with
// ip link set ... up) is not responsive.
func (b *Board) scanCAN() []board.Peripheral {
	var out []board.Peripheral
	for _, p := range b.glob("sys/class/net/*") {
		if t, _ := readString(b.root, p+"/type"); t != arphrdCAN {
			continue
		}
		state, _ := readString(b.root, p+"/operstate")
		name := path.Base(p)
		desc := "CAN interface"
		if bt, err := readString(b.root, p+"/can_bittiming/bitrate"); err == nil && bt != "" {
			desc += ", " + bt + " bit/s"
		}
		out = append(out, board.Peripheral{
			Type:        "can",
			Address:     name,
			Description: desc + " (" + state + ")",
			Responsive:  state != "down",
		})
	}
	return out
}

// scanUART lists the header UART and USB serial adapters.
func (b *Board) scanUART() []board.Peripheral {
	var out []board.Peripheral
	if b.headerUART() {
		out = append(out, board.Peripheral{Type: "uart", Address: "serial0", Description: "header UART on GPIO14/15 (/dev/serial0)", Responsive: true})
	}
	for _, p := range append(b.glob("dev/ttyUSB*"), b.glob("dev/ttyACM*")...) {
		out = append(out, board.Peripheral{Type: "uart", Address: path.Base(p), Description: "USB serial adapter (/" + p + ")", Responsive: true})
	}
	return out
}

// cameraSensors are the CSI sensors of the Raspberry Pi cameras, by kernel
// driver name.
var cameraSensors = map[string]string{
	"ov5647": "Raspberry Pi Camera Module v1 (OV5647)",
	"imx219": "Raspberry Pi Camera Module 2 (IMX219)",
	"imx708": "Raspberry Pi Camera Module 3 (IMX708)",
	"imx477": "Raspberry Pi HQ Camera (IMX477)",
	"imx296": "Raspberry Pi Global Shutter Camera (IMX296)",
	"imx500": "Raspberry Pi AI Camera (IMX500)",
}

// internalVideoNodes are V4L2 devices of the Pi itself (codecs, ISP, CSI
// receivers), not cameras.
var internalVideoNodes = []string{"bcm2835-codec", "bcm2835-isp", "bcm2835-jpeg", "unicam", "rp1-cfe", "pispbe", "rpi-hevc-dec", "hevc-dec"}

// scanCameras finds CSI sensors bound to their drivers (an entry
// "<bus>-<addr>" under /sys/bus/i2c/drivers/<sensor>, what libcamera
// enumerates) and USB cameras (the first video node of each).
func (b *Board) scanCameras() []board.Peripheral {
	var out []board.Peripheral
	drivers := make([]string, 0, len(cameraSensors))
	for d := range cameraSensors {
		drivers = append(drivers, d)
	}
	sort.Strings(drivers)
	var csi []board.Peripheral
	for _, d := range drivers {
		for _, dev := range b.glob("sys/bus/i2c/drivers/" + d + "/*-00*") {
			csi = append(csi, board.Peripheral{Type: "camera", Address: path.Base(dev), Description: cameraSensors[d], Responsive: true})
		}
	}
	// Name CSI cameras csi0, csi1 ... in the order of their I²C device.
	sort.Slice(csi, func(i, j int) bool { return csi[i].Address < csi[j].Address })
	for i := range csi {
		csi[i].Description += " on I²C " + csi[i].Address
		csi[i].Address = fmt.Sprintf("csi%d", i)
	}
	out = append(out, csi...)
	for _, v := range b.glob("sys/class/video4linux/video*") {
		if idx, _ := readString(b.root, v+"/index"); idx != "" && idx != "0" {
			continue // a UVC camera's metadata node
		}
		name, err := readString(b.root, v+"/name")
		if err != nil || internal(name) {
			continue
		}
		out = append(out, board.Peripheral{Type: "camera", Address: path.Base(v), Description: "USB camera: " + name, Responsive: true})
	}
	return out
}

func internal(name string) bool {
	for _, n := range internalVideoNodes {
		if strings.HasPrefix(name, n) {
			return true
		}
	}
	return false
}
