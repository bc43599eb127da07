package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/periph"
	"github.com/saint-os/saint/hal/serial"
	"github.com/saint-os/saint/hal/socketcan"
	"github.com/saint-os/saint/hal/v4l2"
)

// config is what the flags ask for; an empty field skips its checks.
type config struct {
	can        string
	video      string
	sbus, crsf string
	channels   []uint16
	i2cAdapter string
	inaAddr    uint16
	timeout    time.Duration
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "kernelcheck:", err)
		return 2
	}
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()

	var sum Summary
	for _, c := range checks(cfg, ex) {
		r := runCheck(c, cfg.timeout)
		fmt.Fprintln(stdout, r.Line())
		if r.OK {
			sum.Passed++
		} else {
			sum.Failed++
		}
	}
	fmt.Fprintln(stdout, sum.Line())
	if sum.Failed > 0 {
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("kernelcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var channels, addr string
	fs.StringVar(&c.can, "can", "", "CAN interface for the VESC and MIT-actuator checks (vcan0)")
	fs.StringVar(&c.video, "video", "", "V4L2 capture device of vivid (/dev/video0)")
	fs.StringVar(&c.sbus, "sbus", "", "serial port fed SBUS frames (/dev/ttyS1)")
	fs.StringVar(&c.crsf, "crsf", "", "serial port fed CRSF frames (/dev/ttyS2)")
	fs.StringVar(&channels, "rc-channels", "", "the channels sent on -sbus and -crsf, µs, comma-separated")
	fs.StringVar(&c.i2cAdapter, "i2c-adapter", "", "name of the I²C adapter with the INA219's registers (\"SMBus stub driver\")")
	fs.StringVar(&addr, "ina219", "0x40", "the INA219's address on that adapter")
	fs.DurationVar(&c.timeout, "timeout", 60*time.Second, "how long each check may take")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.sbus != "" || c.crsf != "" {
		ch, err := ParseChannels(channels)
		if err != nil {
			return c, fmt.Errorf("-rc-channels: %w", err)
		}
		c.channels = ch
	}
	a, err := strconv.ParseUint(addr, 0, 7)
	if err != nil {
		return c, fmt.Errorf("-ina219 %q: want a 7-bit I²C address", addr)
	}
	c.inaAddr = uint16(a)
	if c.timeout <= 0 {
		return c, fmt.Errorf("-timeout %v: want a positive duration", c.timeout)
	}
	return c, nil
}

// check is one named check; it returns a detail for the report.
type check struct {
	name string
	run  func(ctx context.Context) (string, error)
}

func runCheck(c check, timeout time.Duration) Result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	detail, err := c.run(ctx)
	r := Result{Name: c.name, OK: err == nil, Detail: detail, Millis: float64(time.Since(start).Microseconds()) / 1e3}
	if err != nil {
		r.Detail = err.Error()
	}
	return r
}

func checks(cfg config, ex *executor.Executor) []check {
	var cs []check
	if cfg.can != "" {
		cs = append(cs,
			check{"can-vesc", func(ctx context.Context) (string, error) {
				return withCANPair(ctx, cfg.can, func(driver, twin *socketcan.Bus) (string, error) {
					return checkVESC(ctx, driver, twin, ex)
				})
			}},
			check{"can-mit-arm", func(ctx context.Context) (string, error) {
				return withCANPair(ctx, cfg.can, func(driver, twin *socketcan.Bus) (string, error) {
					return checkMITArm(ctx, driver, twin, ex)
				})
			}})
	}
	if cfg.video != "" {
		cs = append(cs, check{"v4l2-vivid", func(ctx context.Context) (string, error) {
			cam := v4l2Camera{v4l2.New(v4l2.Options{Path: cfg.video})}
			return checkCamera(ctx, cam, ex, camera.Config{Width: 640, Height: 480, FPS: 30}, "vivid")
		}})
	}
	for _, p := range []struct {
		proto rc.Protocol
		dev   string
	}{{rc.SBUS, cfg.sbus}, {rc.CRSF, cfg.crsf}} {
		if p.dev == "" {
			continue
		}
		cs = append(cs, check{"serial-" + string(p.proto), func(ctx context.Context) (string, error) {
			// The line is bytes between two emulated UARTs: an SBUS
			// line's inversion is the wiring's business (a hardware
			// inverter on a Pi), so the port is told one is fitted.
			port, err := serial.Open(p.dev, &serial.Options{HardwareInverter: true})
			if err != nil {
				return "", err
			}
			defer port.Close()
			detail, err := checkRC(ctx, port, p.proto, cfg.channels)
			return p.dev + ": " + detail, err
		}})
	}
	if cfg.i2cAdapter != "" {
		cs = append(cs, check{"i2c-ina219", func(ctx context.Context) (string, error) {
			n, err := findI2CAdapter(cfg.i2cAdapter)
			if err != nil {
				return "", err
			}
			bus, err := periph.OpenI2C(n)
			if err != nil {
				return "", err
			}
			defer bus.Close()
			detail, err := checkINA219(bus, i2cTools{bus: n, addr: cfg.inaAddr}, cfg.inaAddr)
			return fmt.Sprintf("/dev/i2c-%d (%v): %s", n, bus, detail), err
		}})
	}
	return cs
}

// withCANPair opens two raw sockets on iface, the drivers' and the twins',
// runs f and reports how many frames the interface carried meanwhile.
func withCANPair(ctx context.Context, iface string, f func(driver, twin *socketcan.Bus) (string, error)) (string, error) {
	driver, err := socketcan.Open(ctx, iface, nil)
	if err != nil {
		return "", err
	}
	defer driver.Close()
	twin, err := socketcan.Open(ctx, iface, nil)
	if err != nil {
		return "", err
	}
	defer twin.Close()
	before, statErr := txPackets(iface)
	detail, err := f(driver, twin)
	if err != nil {
		return "", err
	}
	after, err2 := txPackets(iface)
	if err := errors.Join(statErr, err2); err != nil {
		return detail, nil
	}
	return fmt.Sprintf("%s; %s carried %d frames", detail, iface, after-before), nil
}

// txPackets reads the interface's count of frames sent.
func txPackets(iface string) (uint64, error) {
	b, err := os.ReadFile("/sys/class/net/" + iface + "/statistics/tx_packets")
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// v4l2Camera gives hal/v4l2's camera the driver query checkCamera asks.
type v4l2Camera struct{ *v4l2.Camera }

func (c v4l2Camera) Driver() (string, error) {
	info, err := c.Query()
	return info.Driver, err
}
