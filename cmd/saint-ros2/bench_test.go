package main

import (
	"context"
	"encoding/binary"
	"log/slog"
	"math"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/cyclone"
	"github.com/saint-os/saint/server/router"
)

// benchRig is a bridge between a NATS broker and a DDS domain in this
// process, a DDS peer, and two more NATS clients for the plain path.
type benchRig struct {
	reg        *ros2.Registry
	ex         *executor.Executor
	nb, pub    *natsbus.Conn
	peer       *cyclone.Participant
	bridgeDDS  *cyclone.Participant
	br         *bridge.Bridge
	closeFuncs []func()
}

func newBenchRig(b testing.TB) *benchRig {
	b.Helper()
	if os.Getenv("CYCLONEDDS_URI") == "" {
		os.Setenv("CYCLONEDDS_URI", cyclone.LoopbackConfig)
	}
	domain := uint32(210 + time.Now().UnixNano()%20)
	r := &benchRig{}
	var err error
	if r.reg, err = ros2.Load(); err != nil {
		b.Fatal(err)
	}
	srv, err := broker.Start(&broker.Options{Port: -1})
	if err != nil {
		b.Fatal(err)
	}
	r.closeFuncs = append(r.closeFuncs, srv.Shutdown)
	if r.nb, err = natsbus.Connect(srv.ClientURL(), nil); err != nil {
		b.Fatal(err)
	}
	if r.pub, err = natsbus.Connect(srv.ClientURL(), nil); err != nil {
		b.Fatal(err)
	}
	r.ex = executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.ex.Run(ctx); close(done) }()
	if r.bridgeDDS, err = cyclone.NewParticipant(domain); err != nil {
		b.Fatal(err)
	}
	if r.peer, err = cyclone.NewParticipant(domain); err != nil {
		b.Fatal(err)
	}
	if r.br, err = bridge.New(bridge.Options{Bus: r.nb, Exec: r.ex, DDS: participant{r.bridgeDDS}, Registry: r.reg,
		Filter: bridge.Filter{Allow: []string{msg.TopicTracksCmdVel, msg.TopicTracksOdom, msg.TopicHeadCameraImageRaw}}}); err != nil {
		b.Fatal(err)
	}
	if err := r.br.Start(); err != nil {
		b.Fatal(err)
	}
	// The server's router, with the shipped route presets, on the same
	// broker: ros2_direct and websocket_direct pass commands straight
	// through to /saint/tracks/cmd_vel.
	rt, err := router.New(router.Options{Exec: r.ex, Bus: r.nb, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	var startErr error
	if err := r.ex.Do(context.Background(), func() { startErr = rt.Start() }); err != nil {
		b.Fatal(err)
	}
	if startErr != nil {
		b.Fatal(startErr)
	}
	r.closeFuncs = append(r.closeFuncs, func() {
		r.br.Stop()
		r.peer.Close()
		r.bridgeDDS.Close()
		cancel()
		<-done
		r.pub.Close()
		r.nb.Close()
	})
	return r
}

func (r *benchRig) close() {
	for i := len(r.closeFuncs) - 1; i >= 0; i-- {
		r.closeFuncs[i]()
	}
}

// report puts the latencies' p50 and p99 (µs) into the benchmark's output.
func report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		b.Fatal("nothing arrived")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(0, "ns/op")
}

// pace runs send b.N times at 100 Hz, waiting up to a second for each to
// arrive, and reports the latencies.
func pace(b *testing.B, send func(i int) time.Time, arrived <-chan int) {
	var lat []time.Duration
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		<-tick.C
		sent := send(i)
	wait:
		for {
			select {
			case got := <-arrived:
				if got == i {
					lat = append(lat, time.Since(sent))
					break wait
				}
			case <-time.After(time.Second):
				break wait
			}
		}
	}
	b.StopTimer()
	report(b, lat)
}

// BenchmarkTwistIn: a DDS Twist on rt/saint/tracks/cmd_vel until the
// router's Twist for the tracks arrives on /saint/tracks/cmd_vel (NATS),
// at 100 Hz: bridge, router input topic, router, bus. The sequence number
// rides in angular.z.
func BenchmarkTwistIn(b *testing.B) {
	r := newBenchRig(b)
	defer r.close()
	arrived := make(chan int, 16)
	last := -1
	if _, err := bus.SubscribeJSON(r.pub, msg.TopicTracksCmdVel, bus.QoS{}, r.ex, func(_ string, tw msg.Twist) {
		// The router also repeats its output at its tick rate: only a new
		// value is the command's arrival.
		if v := int(math.Round(tw.Angular.Z * 1000)); v != last {
			last = v
			deliver(arrived, v)
		}
	}); err != nil {
		b.Fatal(err)
	}
	w, err := r.peer.NewWriter("rt"+msg.TopicTracksCmdVel, "geometry_msgs::msg::dds_::Twist_", cyclone.QoS{Reliable: true})
	if err != nil {
		b.Fatal(err)
	}
	bustest.WaitUntil(b, 10*time.Second, "the bridge to match", func() bool { return w.MatchedReaders() > 0 })
	// Matched on this side is not yet matched on the bridge's: no event
	// here says when its end is ready, and a sample sent before is lost.
	time.Sleep(300 * time.Millisecond)
	pace(b, func(i int) time.Time {
		cdr := make([]byte, 4, 52)
		cdr[1] = 1
		for _, f := range []float64{0.5, 0, 0, 0, 0, float64(i%15000) / 1000} {
			cdr = binary.LittleEndian.AppendUint64(cdr, math.Float64bits(f))
		}
		t := time.Now()
		if err := w.Write(cdr); err != nil {
			b.Fatal(err)
		}
		return t
	}, remap(arrived, 15000))
}

// deliver hands a sequence number to the waiting benchmark without ever
// blocking the goroutine that received it.
func deliver(ch chan<- int, v int) {
	select {
	case ch <- v:
	default:
	}
}

// remap undoes the modulo of the sequence numbers BenchmarkTwistIn sends.
func remap(in <-chan int, mod int) <-chan int {
	out := make(chan int, 16)
	go func() {
		base := 0
		last := -1
		for v := range in {
			if v < last {
				base += mod
			}
			last = v
			deliver(out, base+v)
		}
	}()
	return out
}

// BenchmarkTwistInPlainNATS is the same command without DDS: the
// RouterInput the bridge would send, published by a NATS client on the
// router's input topic, until the router's Twist arrives on
// /saint/tracks/cmd_vel.
func BenchmarkTwistInPlainNATS(b *testing.B) {
	r := newBenchRig(b)
	defer r.close()
	arrived := make(chan int, 16)
	last := -1
	if _, err := bus.SubscribeJSON(r.pub, msg.TopicTracksCmdVel, bus.QoS{}, r.ex, func(_ string, tw msg.Twist) {
		// The router also repeats its output at its tick rate: only a new
		// value is the command's arrival.
		if v := int(math.Round(tw.Angular.Z * 1000)); v != last {
			last = v
			deliver(arrived, v)
		}
	}); err != nil {
		b.Fatal(err)
	}
	// No event says the bridge's bus subscription is live.
	time.Sleep(100 * time.Millisecond)
	pace(b, func(i int) time.Time {
		t := time.Now()
		if err := r.pub.Publish(msg.TopicRouterInput, msg.RouterInput{Source: msg.SourceROS2, Target: "tracks", Command: "drive",
			Values: map[string]float32{"linear": 0.5, "angular": float32(i%15000) / 1000}}); err != nil {
			b.Fatal(err)
		}
		return t
	}, remap(arrived, 15000))
}

// BenchmarkStateOut: nav_msgs/Odometry published on the bus until a DDS
// subscriber of rt/saint/tracks/odom has it, at 100 Hz. The sequence
// number rides in the header's stamp.
func BenchmarkStateOut(b *testing.B) {
	r := newBenchRig(b)
	defer r.close()
	arrived := make(chan int, 16)
	m, _ := r.reg.Message("nav_msgs/Odometry")
	rd, err := r.peer.NewReader("rt"+msg.TopicTracksOdom, m.DDSTypeName(), cyclone.QoS{Reliable: true}, func(cdr []byte) {
		deliver(arrived, int(binary.LittleEndian.Uint32(cdr[4:])))
	})
	if err != nil {
		b.Fatal(err)
	}
	bustest.WaitUntil(b, 10*time.Second, "the bridge to match", func() bool { return rd.MatchedWriters() > 0 })
	// Matched on this side is not yet matched on the bridge's: no event
	// here says when its end is ready, and a sample sent before is lost.
	time.Sleep(300 * time.Millisecond)
	pace(b, func(i int) time.Time {
		o := msg.Odometry{Header: msg.Header{Stamp: msg.Time{Sec: int32(i)}, FrameID: "odom"}, ChildFrameID: "base_link"}
		o.Pose.Pose.Orientation = msg.IdentityQuaternion()
		t := time.Now()
		if err := r.pub.Publish(msg.TopicTracksOdom, o); err != nil {
			b.Fatal(err)
		}
		return t
	}, arrived)
}

// BenchmarkStateOutPlainNATS is the same Odometry from one NATS client to
// another.
func BenchmarkStateOutPlainNATS(b *testing.B) {
	r := newBenchRig(b)
	defer r.close()
	arrived := make(chan int, 16)
	if _, err := bus.SubscribeJSON(r.nb, "/saint/bench/odom", bus.QoS{}, r.ex, func(_ string, o msg.Odometry) {
		deliver(arrived, int(o.Header.Stamp.Sec))
	}); err != nil {
		b.Fatal(err)
	}
	// No event says the bridge's bus subscription is live.
	time.Sleep(100 * time.Millisecond)
	pace(b, func(i int) time.Time {
		o := msg.Odometry{Header: msg.Header{Stamp: msg.Time{Sec: int32(i)}, FrameID: "odom"}, ChildFrameID: "base_link"}
		o.Pose.Pose.Orientation = msg.IdentityQuaternion()
		t := time.Now()
		if err := r.pub.Publish("/saint/bench/odom", o); err != nil {
			b.Fatal(err)
		}
		return t
	}, arrived)
}

// BenchmarkCamera320x240: rgb8 frames published on the bus as fast as the
// bridge takes them to a DDS subscriber (best effort, as ROS 2's sensor
// data profile); frames/s is what arrives.
func BenchmarkCamera320x240(b *testing.B) {
	r := newBenchRig(b)
	defer r.close()
	arrived := make(chan int, 64)
	m, _ := r.reg.Message("sensor_msgs/Image")
	rd, err := r.peer.NewReader("rt"+msg.TopicHeadCameraImageRaw, m.DDSTypeName(), cyclone.QoS{Reliable: false, Depth: 5}, func(cdr []byte) {
		deliver(arrived, int(binary.LittleEndian.Uint32(cdr[4:])))
	})
	if err != nil {
		b.Fatal(err)
	}
	bustest.WaitUntil(b, 10*time.Second, "the bridge to match", func() bool { return rd.MatchedWriters() > 0 })
	// Matched on this side is not yet matched on the bridge's: no event
	// here says when its end is ready, and a sample sent before is lost.
	time.Sleep(300 * time.Millisecond)
	img := msg.Image{Header: msg.Header{FrameID: "head_camera"}, Height: 240, Width: 320, Encoding: msg.ImageRGB8, Step: 960, Data: make([]byte, 320*240*3)}
	for i := range img.Data {
		img.Data[i] = byte(i * 7)
	}
	got, dropped := 0, 0
	b.ResetTimer()
	start := time.Now()
	for i := 1; i <= b.N; i++ {
		img.Header.Stamp.Sec = int32(i)
		if err := r.pub.Publish(msg.TopicHeadCameraImageRaw, img); err != nil {
			b.Fatal(err)
		}
		// One frame in flight: the next goes when this one arrived (or
		// was lost).
		select {
		case <-arrived:
			got++
		case <-time.After(500 * time.Millisecond):
			dropped++
		}
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(got)/el.Seconds(), "frames/s")
	b.ReportMetric(float64(dropped), "lost")
	b.ReportMetric(0, "ns/op")
}
