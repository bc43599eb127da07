package feetech

import (
	"bytes"
	"testing"

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
