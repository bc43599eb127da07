package periph

import (
	"bytes"
	"strings"
	"testing"

	"periph.io/x/conn/v3/conntest"
	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/conn/v3/physic"
	pspi "periph.io/x/conn/v3/spi"
	"periph.io/x/conn/v3/spi/spitest"
)

func TestI2CPassesTransactionsThrough(t *testing.T) {
	// An MPU6050 WHO_AM_I read, then a PWR_MGMT_1 write.
	pb := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x68, W: []byte{0x75}, R: []byte{0x68}},
		{Addr: 0x68, W: []byte{0x6B, 0x00}},
	}, DontPanic: true}
	b := NewI2C(pb, "1")
	r := make([]byte, 1)
	if err := b.Tx(0x68, []byte{0x75}, r); err != nil {
		t.Fatal(err)
	}
	if r[0] != 0x68 {
		t.Errorf("WHO_AM_I read %#x, want 0x68", r[0])
	}
	if err := b.Tx(0x68, []byte{0x6B, 0x00}, nil); err != nil {
		t.Fatal(err)
	}
	if err := pb.Close(); err != nil {
		t.Error(err)
	}
}

func TestI2CErrors(t *testing.T) {
	pb := &i2ctest.Playback{Ops: []i2ctest.IO{{Addr: 0x40, W: []byte{0xFE}, R: []byte{0x79}}}, DontPanic: true}
	b := NewI2C(pb, "1")
	// A device that is not there: the playback expects 0x40.
	err := b.Tx(0x41, []byte{0xFE}, make([]byte, 1))
	if err == nil || !strings.Contains(err.Error(), "bus 1") || !strings.Contains(err.Error(), "0x41") || !strings.Contains(err.Error(), "i2ctest: unexpected addr") {
		t.Errorf("Tx to an absent device = %v, want the bus's error naming bus 1 and 0x41", err)
	}
	err = b.Tx(0x240, nil, make([]byte, 1))
	if err == nil || !strings.Contains(err.Error(), "7-bit") {
		t.Errorf("Tx(0x240) = %v, want a 7-bit address error", err)
	}
	if pb.Count != 0 {
		t.Errorf("%d transactions reached the bus, want 0", pb.Count)
	}
}

func TestSPIPassesTransfersThrough(t *testing.T) {
	// QMI8658 WHO_AM_I: read bit set on register 0x00, the chip answers 0x05.
	pb := &spitest.Playback{Playback: conntest.Playback{Ops: []conntest.IO{
		{W: []byte{0x80, 0x00}, R: []byte{0x00, 0x05}},
		{W: []byte{0x02, 0x60}},
	}, DontPanic: true}}
	c, err := pb.Connect(10*physic.MegaHertz, pspi.Mode0, 8)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSPI(c, "0.0")
	r := make([]byte, 2)
	if err := s.Tx([]byte{0x80, 0x00}, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r, []byte{0x00, 0x05}) {
		t.Errorf("read % x, want 00 05", r)
	}
	if err := s.Tx([]byte{0x02, 0x60}, nil); err != nil {
		t.Fatal(err)
	}
	if err := pb.Close(); err != nil {
		t.Error(err)
	}
}

func TestSPIErrors(t *testing.T) {
	pb := &spitest.Playback{Playback: conntest.Playback{DontPanic: true}}
	c, err := pb.Connect(physic.MegaHertz, pspi.Mode0, 8)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSPI(c, "0.1")
	if err := s.Tx([]byte{1, 2}, make([]byte, 3)); err == nil || !strings.Contains(err.Error(), "SPI 0.1") {
		t.Errorf("Tx with a longer read = %v, want an error naming SPI 0.1", err)
	}
	// The playback has no transfer left: its error comes back wrapped.
	if err := s.Tx([]byte{1}, nil); err == nil || !strings.Contains(err.Error(), "conntest: unexpected Tx") || !strings.Contains(err.Error(), "SPI 0.1") {
		t.Errorf("Tx on an exhausted bus = %v, want the bus's error naming SPI 0.1", err)
	}
}
