package livelink

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

func TestRegistryRateStaleForget(t *testing.T) {
	r := NewRegistry(time.Second, time.Minute, 2)
	t0 := time.Unix(1_700_000_000, 0)
	frame := msg.LiveLinkFrame{SubjectName: "FaceCapture", SubjectType: msg.SubjectFace,
		PropertyNames: []string{"HeadYaw", "headYaw"}, PropertyValues: []float32{0.1, 0.1}}
	var changes int
	for i := 0; i < 100; i++ {
		frame.FrameNumber = uint64(i)
		changed, ok := r.Observe(frame, "10.0.0.7", t0.Add(time.Duration(i)*time.Second/60))
		if !ok {
			t.Fatal("frame refused")
		}
		if changed {
			changes++
		}
	}
	if changes != 1 {
		t.Errorf("%d changes for one steady subject, want 1", changes)
	}
	s, ok := r.Subject("FaceCapture")
	if !ok || s.SourceIP != "10.0.0.7" || s.SubjectType != msg.SubjectFace || math.Abs(s.FrameRate-60) > 0.01 {
		t.Fatalf("subject %+v", s)
	}
	if len(s.Properties) != 1 || s.Properties[0] != "HeadYaw" {
		t.Errorf("properties %v, want the alias left out", s.Properties)
	}
	last := t0.Add(99 * time.Second / 60)
	if want := float64(last.UnixNano()) / 1e9; s.LastFrame != want {
		t.Errorf("last frame %v, want %v", s.LastFrame, want)
	}
	if got := r.Sweep(last.Add(500 * time.Millisecond)); len(got) != 0 {
		t.Errorf("stale after half a second: %v", got)
	}
	got := r.Sweep(last.Add(1100 * time.Millisecond))
	if len(got) != 1 || got[0].FrameRate != 0 {
		t.Fatalf("sweep after 1.1 s: %+v, want the subject stale at rate 0", got)
	}
	if st := r.Status(); len(st) != 1 || !st[0].Stale || st[0].Frames != 100 || st[0].FrameNumber != 99 {
		t.Errorf("status %+v", st)
	}
	// A frame brings it back: a change.
	if changed, _ := r.Observe(frame, "10.0.0.7", last.Add(2*time.Second)); !changed {
		t.Error("a stale subject's frame is not a change")
	}
	// Size limit.
	r.Observe(msg.LiveLinkFrame{SubjectName: "B"}, "ip", last.Add(2*time.Second))
	if _, ok := r.Observe(msg.LiveLinkFrame{SubjectName: "C"}, "ip", last.Add(2*time.Second)); ok || r.Refused() != 1 {
		t.Error("a third subject was taken by a registry of 2")
	}
	r.Sweep(last.Add(2*time.Minute + 3*time.Second))
	if len(r.Subjects()) != 0 {
		t.Errorf("subjects silent for 2 minutes are kept: %v", r.Subjects())
	}
}
