package record_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
)

// BenchmarkRecordCameraFrame records head camera frames (640×480 rgb8,
// 0.9 MB) published on the in-process bus as the head role publishes
// them, a value on the executor: one op is one frame published and,
// amortised over the run (Stop waits for the writer), stored as
// sensor_msgs/msg/Image CDR in a zstd-chunked file. publish-ns/op is the
// part spent in the publish, on the executor: what recording a frame costs
// the robot itself.
//
//	go test -run '^$' -bench RecordCameraFrame -benchmem ./record
func BenchmarkRecordCameraFrame(b *testing.B) {
	const w, h = 640, 480
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()
	var rec *record.Recorder
	var err error
	if derr := ex.Do(ctx, func() {
		rec, err = record.Start(record.Options{Bus: sub, Exec: ex, File: filepath.Join(b.TempDir(), "camera.mcap"), Lossless: true})
	}); derr != nil || err != nil {
		b.Fatal(derr, err)
	}
	data := make([]byte, 3*w*h)
	for i := range data {
		data[i] = byte(i * 7)
	}
	img := msg.Image{Header: msg.Header{FrameID: "head_camera"}, Width: w, Height: h, Encoding: msg.ImageRGB8, Step: 3 * w, Data: data}
	var publishing time.Duration
	b.ResetTimer()
	for i := range b.N {
		img.Header.Stamp.Nanosec = uint32(i)
		if err := ex.Do(ctx, func() {
			t0 := time.Now()
			_ = pub.Publish(msg.TopicHeadCameraImageRaw, img)
			publishing += time.Since(t0)
		}); err != nil {
			b.Fatal(err)
		}
	}
	if err := rec.Stop(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if st := rec.Status(); st.Messages != uint64(b.N) || st.Dropped != 0 {
		b.Fatalf("recorded %d frames, dropped %d, want %d", st.Messages, st.Dropped, b.N)
	}
	b.ReportMetric(float64(publishing.Nanoseconds())/float64(b.N), "publish-ns/op")
}
