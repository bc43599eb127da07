package feetech

import (
	"bytes"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart/uarttest"
)

// A sync write, the packet a control loop sends every period, allocates
// nothing once the bus has sent one: its transaction and buffers are
// reused. Reuse must not leak one packet's bytes into the next: the bytes
// on the line are checked against packets worked out by hand.
func TestSyncWriteDoesNotAllocate(t *testing.T) {
	ex := executor.NewVirtual()
	p := uarttest.NewPort(ex.Clock())
	b, err := New(p, ex, &Options{Model: STS})
	if err != nil {
		t.Fatal(err)
	}
	var errs int
	done := func(err error) {
		if err != nil {
			errs++
		}
	}
	first := []SyncData{{1, []byte{0x00, 0x08}}, {2, []byte{0xFF, 0x03}}}
	b.SyncWrite(RegGoalPosition, first, done)
	if got, want := p.Written(), h("FF FF FE 0A 83 2A 02 01 00 08 02 FF 03 3B"); !bytes.Equal(got, want) {
		t.Fatalf("first sync write sent % X, want % X", got, want)
	}
	p.SetRecording(false)
	if allocs := testing.AllocsPerRun(100, func() { b.SyncWrite(RegGoalPosition, first, done) }); allocs != 0 {
		t.Errorf("a sync write allocates %v times, want 0", allocs)
	}
	p.SetRecording(true)
	b.SyncWrite(RegGoalPosition, []SyncData{{3, []byte{0x10, 0x00}}, {4, []byte{0x20, 0x00}}}, done)
	all := p.Written()
	if want := h("FF FF FE 0A 83 2A 02 03 10 00 04 20 00 11"); !bytes.HasSuffix(all, want) {
		t.Errorf("a sync write on a reused buffer sent % X, want it to end with % X", all, want)
	}
	if errs != 0 {
		t.Errorf("%d sync writes failed", errs)
	}
}

// ReadPresent reuses its transactions: one servo's answer must not show
// in the next servo's report, nor a request's bytes in the next request.
func TestReadPresentReusesTransactions(t *testing.T) {
	ex := executor.NewVirtual()
	p := &uarttest.Playback{Ops: []uarttest.IO{
		{W: h("FF FF 01 04 02 38 0B B5"), R: h("FF FF 01 0D 00 00 08 64 80 FA 04 4A 1F 00 00 01 9D")},
		{W: h("FF FF 02 04 02 38 0B B4"), R: h("FF FF 02 0D 00 00 04 00 00 00 00 46 20 00 00 00 86")},
	}}
	b, err := New(p, ex, &Options{Model: STS})
	if err != nil {
		t.Fatal(err)
	}
	var got []Present
	read := func(id uint8) {
		b.ReadPresent(id, func(pr Present, err error) {
			if err != nil {
				t.Errorf("servo %d: %v", id, err)
			}
			pr.At = time.Time{}
			got = append(got, pr)
		})
		drain(t, ex)
	}
	read(1)
	read(2)
	want := []Present{
		{Position: 2048, Speed: -100, Load: -250, Voltage: 7.4, Temperature: 31, Moving: true},
		{Position: 1024, Voltage: 7.0, Temperature: 32},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("reports %+v, want %+v", got, want)
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
}
