package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	wire "github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/serial"
	"github.com/saint-os/saint/hal/uart"
)

const rcUsage = `usage: rc send --device PATH --protocol sbus|ibus|crsf --ch US,US,... [--rate HZ] [--count N]
  writes RC receiver frames with the given channel pulse widths (µs, channel 1 first;
  channels not given are 1500) to a serial device, as a receiver would send them`

// rcCmd is "saintctl rc ...".
func rcCmd(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "send" {
		return errors.New(rcUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return rcSend(ctx, args[1:], out)
}

// rcSendOptions are rc send's flags.
type rcSendOptions struct {
	device   string
	protocol wire.Protocol
	micros   []uint16
	rate     float64
	count    int
	inverted bool
	rssi     int
	lq       int
}

func parseRCSend(args []string) (rcSendOptions, error) {
	f := flag.NewFlagSet("rc send", flag.ContinueOnError)
	device := f.String("device", "", "serial device to write to, e.g. /dev/ttyUSB0 (required)")
	proto := f.String("protocol", "sbus", "sbus, ibus or crsf")
	chans := f.String("ch", "", "channel pulse widths in µs, comma separated, channel 1 first (required)")
	rate := f.Float64("rate", 0, "frames per second (default: the protocol's, SBUS 71, IBUS 143, CRSF 250)")
	count := f.Int("count", 0, "frames to send; 0 sends until interrupted")
	inverted := f.Bool("inverted", false, "SBUS only: the line is inverted by a hardware inverter after the adapter")
	rssi := f.Int("rssi", -50, "CRSF only: uplink RSSI in dBm sent in the link statistics")
	lq := f.Int("lq", 100, "CRSF only: link quality in % sent in the link statistics")
	if err := f.Parse(args); err != nil {
		return rcSendOptions{}, err
	}
	o := rcSendOptions{device: *device, protocol: wire.Protocol(*proto), rate: *rate, count: *count,
		inverted: *inverted, rssi: *rssi, lq: *lq}
	if o.device == "" {
		return o, errors.New("rc send: --device is required")
	}
	if !o.protocol.Serial() {
		return o, fmt.Errorf("rc send: --protocol %q: want sbus, ibus or crsf", *proto)
	}
	if *chans == "" {
		return o, errors.New("rc send: --ch is required (e.g. --ch 1500,1500,1000,1500)")
	}
	max := wire.MaxChannels
	if o.protocol == wire.IBUS {
		max = wire.IBUSChannels
	}
	parts := strings.Split(*chans, ",")
	if len(parts) > max {
		return o, fmt.Errorf("rc send: --ch has %d channels, %s carries %d", len(parts), o.protocol, max)
	}
	for i, s := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 800 || v > 2200 {
			return o, fmt.Errorf("rc send: --ch channel %d: %q, want a pulse width of 800 to 2200 µs", i+1, s)
		}
		o.micros = append(o.micros, uint16(v))
	}
	if o.rate < 0 || o.rate > 1000 || o.rate != o.rate {
		return o, fmt.Errorf("rc send: --rate %v: want 1 to 1000 frames per second", o.rate)
	}
	if o.count < 0 {
		return o, fmt.Errorf("rc send: --count %d: want 0 or more", o.count)
	}
	if o.rssi < -128 || o.rssi > 0 || o.lq < 0 || o.lq > 100 {
		return o, fmt.Errorf("rc send: --rssi %d --lq %d: want -128 to 0 dBm and 0 to 100%%", o.rssi, o.lq)
	}
	if o.inverted && o.protocol != wire.SBUS {
		return o, errors.New("rc send: --inverted is for SBUS only")
	}
	return o, nil
}

// rcFrames builds the bytes of one frame (for CRSF, every tenth frame is
// preceded by link statistics, as a receiver sends them).
type rcFrames struct {
	o    rcSendOptions
	link wire.LinkStats
}

func (f *rcFrames) frame(n int) []byte {
	var us [wire.MaxChannels]uint16
	for i := range us {
		us[i] = 1500
	}
	copy(us[:], f.o.micros)
	switch f.o.protocol {
	case wire.SBUS:
		var s wire.SBUSFrame
		for i, v := range us {
			s.Raw[i] = wire.MicrosToSBUS(v)
		}
		return s.Append(nil)
	case wire.IBUS:
		var s wire.IBUSFrame
		copy(s.Micros[:], us[:wire.IBUSChannels])
		return s.Append(nil)
	}
	var raw [wire.CRSFChannels]uint16
	for i, v := range us {
		raw[i] = wire.MicrosToCRSF(v)
	}
	var b []byte
	if n%10 == 0 {
		b = wire.AppendCRSFLinkStats(b, wire.CRSFAddrFlightController, &f.link)
	}
	return wire.AppendCRSFChannels(b, wire.CRSFAddrFlightController, &raw)
}

func rcSend(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseRCSend(args)
	if err != nil {
		return err
	}
	lc, err := wire.PortConfig(o.protocol)
	if err != nil {
		return err
	}
	lc.Inverted = o.inverted
	port, err := serial.Open(o.device, &serial.Options{Config: lc, HardwareInverter: o.inverted})
	if err != nil {
		return fmt.Errorf("rc send: %w", err)
	}
	defer port.Close()
	return sendFrames(ctx, port, o, out)
}

// sendFrames writes o's frames to port at o's rate.
func sendFrames(ctx context.Context, port uart.Port, o rcSendOptions, out io.Writer) error {
	period := map[wire.Protocol]time.Duration{wire.SBUS: wire.SBUSPeriod, wire.IBUS: wire.IBUSPeriod, wire.CRSF: wire.CRSFPeriod}[o.protocol]
	if o.rate > 0 {
		period = time.Duration(float64(time.Second) / o.rate)
	}
	f := &rcFrames{o: o, link: wire.LinkStats{UplinkRSSI1: uint8(-o.rssi), UplinkRSSI2: uint8(-o.rssi),
		UplinkLQ: uint8(o.lq), RFMode: 6, TxPower: 3, DownlinkRSSI: uint8(-o.rssi), DownlinkLQ: uint8(o.lq)}}
	tick := time.NewTicker(period)
	defer tick.Stop()
	sent := 0
	for o.count == 0 || sent < o.count {
		if _, err := port.Write(f.frame(sent)); err != nil {
			return fmt.Errorf("rc send: %w", err)
		}
		sent++
		if o.count != 0 && sent == o.count {
			break
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(out, "sent %d %s frames\n", sent, o.protocol)
			return nil
		case <-tick.C:
		}
	}
	fmt.Fprintf(out, "sent %d %s frames\n", sent, o.protocol)
	return nil
}
