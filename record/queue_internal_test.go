package record

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// frame is a 300 KB camera frame numbered seq.
func frame(seq int) msg.Image {
	const w, h = 400, 250
	return msg.Image{Header: msg.Header{FrameID: "head_camera", Stamp: msg.Time{Sec: int32(seq)}},
		Width: w, Height: h, Encoding: msg.ImageRGB8, Step: 3 * w, Data: make([]byte, 3*w*h)}
}

// stalledRecorder starts a recorder of camera frames with a 1 MB byte
// budget whose writer is held (its mutex taken) until the returned
// release is called.
func stalledRecorder(t *testing.T, lossless bool) (rec *Recorder, publish func(n int), release func()) {
	t.Helper()
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	t.Cleanup(func() { pub.Close(); sub.Close() })
	rec, err := Start(Options{Bus: sub, Exec: ex, File: filepath.Join(t.TempDir(), "q.mcap"),
		Topics: []string{msg.TopicHeadCameraImageRaw}, QueueBytes: 1 << 20, Lossless: lossless})
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	released := false
	release = func() {
		if !released {
			released = true
			rec.mu.Unlock()
		}
	}
	t.Cleanup(release)
	publish = func(n int) {
		for i := 0; i < n; i++ {
			if err := pub.Publish(msg.TopicHeadCameraImageRaw, frame(i)); err != nil {
				t.Error(err)
			}
			if err := ex.RunFor(context.Background(), time.Millisecond); err != nil {
				t.Error(err)
			}
		}
	}
	return rec, publish, release
}

// TestQueueBytesBoundsWaitingFrames publishes 10 frames of 300 KB while
// the writer is stalled: with a 1 MB budget 3 are taken (one of them in
// the writer's hands), the rest are dropped and counted, and what waited is
// written once the writer moves again.
func TestQueueBytesBoundsWaitingFrames(t *testing.T) {
	rec, publish, release := stalledRecorder(t, false)
	publish(10)
	if q := rec.queued.Load(); q > 1<<20 {
		t.Errorf("%d bytes queued, budget %d", q, 1<<20)
	}
	// Status would wait for the stalled writer's mutex.
	if dropped := rec.dropped.Load(); dropped != 7 {
		t.Errorf("%d of 10 frames dropped with room for 3 (the one in the stalled writer's hands counts), want 7", dropped)
	}
	release()
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	st := rec.Status()
	if st.Messages+st.Dropped != 10 {
		t.Errorf("%d written + %d dropped, want 10 frames accounted for", st.Messages, st.Dropped)
	}
	if st.Queued != 0 {
		t.Errorf("%d bytes still counted as queued after Stop", st.Queued)
	}
}

// TestLosslessWaitsForRoom publishes 10 frames of 300 KB in a lossless
// recording whose writer is stalled: the publishing executor waits once
// the 1 MB budget is reached instead of queueing more, and every frame is
// written after the writer moves again.
func TestLosslessWaitsForRoom(t *testing.T) {
	rec, publish, release := stalledRecorder(t, true)
	done := make(chan struct{})
	go func() { defer close(done); publish(10) }()
	// The handler blocks on the budget: queued stops growing below it.
	one := frame(0)
	bustest.WaitUntil(t, 10*time.Second, "three entries queued", func() bool { return rec.queued.Load() >= 3*(entry{val: &one}).size() })
	time.Sleep(50 * time.Millisecond) // a handler not held by the budget would queue more now
	if q := rec.queued.Load(); q > 1<<20 {
		t.Errorf("%d bytes queued in a lossless recording, budget %d", q, 1<<20)
	}
	select {
	case <-done:
		t.Fatal("all 10 frames were taken with the writer stalled and a 1 MB budget")
	default:
	}
	release()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("publishing did not finish after the writer moved again")
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	if st := rec.Status(); st.Messages != 10 || st.Dropped != 0 {
		t.Errorf("%d written, %d dropped in a lossless recording, want 10 and 0", st.Messages, st.Dropped)
	}
}
