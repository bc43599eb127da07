package main

import (
	"fmt"
	"io/fs"
	"net"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	esocketcan "go.einride.tech/can/pkg/socketcan"
	"golang.org/x/sys/unix"

	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/device/vesc"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/pwm"
	"github.com/saint-os/saint/hal/socketcan"
	"github.com/saint-os/saint/hal/spi"
	"github.com/saint-os/saint/hal/uart"
	"github.com/saint-os/saint/node/safeoutputs"
	"github.com/saint-os/saint/roleconfig"
)

// vcanSockets opens two raw CAN sockets on a vcan0 created in a network
// namespace of its own (as hal/socketcan's test does), or skips saying why.
func vcanSockets(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ipCmd, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("no ip command to create a vcan interface with; TestSafeOutputsCommand and node/safeoutputs cover the frames on the CAN fake")
	}
	type result struct {
		a, b net.Conn
		skip string
		err  error
	}
	res := make(chan result, 1)
	go func() {
		// The namespace belongs to this locked thread, retired with it.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			res <- result{skip: fmt.Sprintf("cannot create a network namespace for vcan (unshare: %v); node/safeoutputs covers the frames on the CAN fake", err)}
			return
		}
		for _, args := range [][]string{{"link", "add", "vcan0", "type", "vcan"}, {"link", "set", "vcan0", "up"}} {
			if out, err := exec.Command(ipCmd, args...).CombinedOutput(); err != nil {
				res <- result{skip: fmt.Sprintf("the kernel does not offer vcan here (ip %s: %v: %s); node/safeoutputs covers the frames on the CAN fake",
					strings.Join(args, " "), err, strings.TrimSpace(string(out)))}
				return
			}
		}
		a, err := esocketcan.Dial("can", "vcan0")
		if err != nil {
			res <- result{err: err}
			return
		}
		b, err := esocketcan.Dial("can", "vcan0")
		if err != nil {
			_ = a.Close()
			res <- result{err: err}
			return
		}
		res <- result{a: a, b: b}
	}()
	r := <-res
	if r.skip != "" {
		t.Skip(r.skip)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.a, r.b
}

// canOnly is hardware with one CAN interface and nothing else.
type canOnly struct{ bus can.Bus }

func (h canOnly) GPIO(int) (gpio.PinIO, error)   { return nil, board.ErrNotFound }
func (h canOnly) PWM(int) (pwm.Pin, error)       { return nil, board.ErrNotFound }
func (h canOnly) I2C(int) (i2c.Bus, error)       { return nil, board.ErrNotFound }
func (h canOnly) SPI(int, int) (spi.Conn, error) { return nil, board.ErrNotFound }
func (h canOnly) UART(string) (uart.Port, error) { return nil, board.ErrNotFound }
func (h canOnly) CAN(name string) (can.Bus, error) {
	if name != "can0" {
		return nil, board.ErrNotFound
	}
	return h.bus, nil
}

// The balance base's stop frames go through the kernel's SocketCAN: what a
// candump on the interface sees after the node died.
func TestSafeOutputsOnVirtualCAN(t *testing.T) {
	ca, cb := vcanSockets(t)
	node := socketcan.New(ca, "vcan0", nil)
	defer node.Close()
	dump := socketcan.New(cb, "vcan0", nil)
	defer dump.Close()
	got := make(chan can.Frame, 16)
	stop := dump.Receive(func(f can.Frame, _ time.Time) { got <- f })
	defer stop()

	data, err := fs.ReadFile(fixtures.Config(), "roles/balance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := roleconfig.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := safeoutputs.For(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := safeoutputs.Err(plan.Apply(canOnly{node})); err != nil {
		t.Fatal(err)
	}
	want := []can.Frame{
		vesc.CommandFrame(vesc.CmdSetCurrent, 68, 0),
		vesc.CommandFrame(vesc.CmdSetCurrent, 56, 0),
		vesc.CommandFrame(vesc.CmdSetCurrent, vesc.Broadcast, 0),
	}
	var frames []can.Frame
	for range want {
		select {
		case f := <-got:
			frames = append(frames, f)
		case <-time.After(10 * time.Second):
			t.Fatalf("received %v of %v", frames, want)
		}
	}
	if !slices.Equal(frames, want) {
		t.Errorf("vcan0 carried %v, want %v", frames, want)
	}
}
