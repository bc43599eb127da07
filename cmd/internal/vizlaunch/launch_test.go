package vizlaunch

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
	simboard "github.com/saint-os/saint/sim/board"
)

type oneBoard map[string]*simboard.Board

func (b oneBoard) Board(name string) (*simboard.Board, error) {
	if bd, ok := b[name]; ok {
		return bd, nil
	}
	return nil, errors.New("no such board")
}

func TestPublishConsoleSendsTheDisplayRAM(t *testing.T) {
	board, err := simboard.New(&simboard.Options{Profile: simboard.Console})
	if err != nil {
		t.Fatal(err)
	}
	// Light the top left pixel: display on, then one data byte at column
	// 0 of page 0.
	i2c, _ := board.Hardware().I2C(1)
	if err := i2c.Tx(0x3C, []byte{0x00, 0xAF}, nil); err != nil {
		t.Fatal(err)
	}
	if err := i2c.Tx(0x3C, []byte{0x40, 0x01}, nil); err != nil {
		t.Fatal(err)
	}
	ex := executor.NewVirtual()
	b := mem.New()
	var rec bustest.Recorder
	if _, err := b.Subscribe(ConsoleBusTopic, bus.QoS{}, ex, rec.Handler); err != nil {
		t.Fatal(err)
	}
	stop := PublishConsole(ex, b, oneBoard{"console": board}, nil)
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if n := rec.Len(); n != ConsoleRate {
		t.Errorf("%d frames in 1 s, want %d", n, ConsoleRate)
	}
	var f ConsoleFrame
	if err := rec.Msgs()[0].Decode(&f); err != nil {
		t.Fatal(err)
	}
	if len(f.Framebuffer) != 1024 || f.Framebuffer[0] != 0x01 || !bytes.Equal(f.Framebuffer, board.SSD1306().Framebuffer()) {
		t.Errorf("frame = %d bytes starting %x, want the display RAM with the top left pixel lit", len(f.Framebuffer), f.Framebuffer[:1])
	}
	stop()
	before := rec.Len()
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if rec.Len() != before {
		t.Errorf("%d frames after stop", rec.Len()-before)
	}
}

// A robot without a console board, or whose console board has no
// display, gets no frames: nothing is published, before or after stop,
// which is safe to call.
func TestPublishConsoleWithoutAConsole(t *testing.T) {
	headBoard, err := simboard.New(&simboard.Options{Profile: simboard.Head})
	if err != nil {
		t.Fatal(err)
	}
	if headBoard.SSD1306() != nil {
		t.Fatal("the head board has a display: it cannot stand for a console board without one")
	}
	for name, boards := range map[string]oneBoard{"no console board": {}, "a console board without a display": {"console": headBoard}} {
		t.Run(name, func(t *testing.T) {
			ex := executor.NewVirtual()
			b := mem.New()
			var rec bustest.Recorder
			if _, err := b.Subscribe(ConsoleBusTopic, bus.QoS{}, ex, rec.Handler); err != nil {
				t.Fatal(err)
			}
			stop := PublishConsole(ex, b, boards, nil)
			if err := ex.RunFor(context.Background(), time.Second); err != nil {
				t.Fatal(err)
			}
			stop()
			if err := ex.RunFor(context.Background(), time.Second); err != nil {
				t.Fatal(err)
			}
			if n := rec.Len(); n != 0 {
				t.Errorf("%d console frames published", n)
			}
		})
	}
}
