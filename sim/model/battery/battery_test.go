package battery

import (
	"math"
	"testing"
)

func TestSagAndDischarge(t *testing.T) {
	b := New(LiFePO4_8S())
	if b.Terminal(0) != 27.2 {
		t.Errorf("full at rest %.2f V, want 27.2", b.Terminal(0))
	}
	if got := b.Terminal(50); math.Abs(got-(27.2-0.08*50)) > 1e-12 {
		t.Errorf("at 50 A: %.3f V, want %.3f", got, 27.2-4.0)
	}
	// 10 A for 30 minutes takes half of 10 A·h.
	for i := 0; i < 1800; i++ {
		b.Draw(10, 1)
	}
	if math.Abs(b.SoC()-0.5) > 1e-9 || math.Abs(b.Voltage()-(25.6-0.8)) > 1e-9 {
		t.Errorf("after 5 A·h: SoC %.4f, %.3f V; want 0.5 and 24.8 V", b.SoC(), b.Voltage())
	}
	b.Draw(-20, 3600) // charging past full stops at full
	if b.SoC() != 1 {
		t.Errorf("SoC %g after charging, want 1", b.SoC())
	}
	if b.Terminal(1e6) != 0 {
		t.Error("terminal voltage went negative")
	}
}

func TestBadInput(t *testing.T) {
	b := New(Params{FullV: 1, EmptyV: 2})
	if b.Params() != LiFePO4_8S() {
		t.Error("inverted voltages were kept")
	}
	b.Draw(math.NaN(), 1)
	b.Draw(1, math.Inf(1))
	b.Draw(1, -1)
	b.SetSoC(math.NaN())
	if b.SoC() != 1 || math.IsNaN(b.Terminal(math.NaN())) {
		t.Errorf("bad input changed the pack: SoC %g", b.SoC())
	}
}
