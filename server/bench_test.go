package server_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server"
)

// percentiles reports p50 and p99 of ds as benchmark metrics.
func percentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		b.Fatal("no samples")
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	p := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) }
	b.ReportMetric(p(0.50), "p50-µs")
	b.ReportMetric(p(0.99), "p99-µs")
	b.ReportMetric(float64(ds[len(ds)-1].Microseconds()), "max-µs")
}

// BenchmarkCommandLatency sends head move commands over the WebSocket API
// at 1,000 per second and measures the time from writing each command to
// its HeadCommand arriving on /saint/head/cmd (through authentication,
// the gateway, the router and the in-process bus).
func BenchmarkCommandLatency(b *testing.B) {
	r, bb := apiRobotB(b)
	conn, _, err := websocket.DefaultDialer.Dial(r.wsURL(), http.Header{"Authorization": {"Bearer " + r.srv.Token()}})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	go func() { // drain responses
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	type key struct{ pan, tilt float32 }
	var mu sync.Mutex
	sent := map[key]time.Time{}
	var lat []time.Duration
	got := make(chan struct{}, b.N+1)
	sub, err := bb.Subscribe(msg.TopicHeadCmd, bus.QoS{Depth: 65536}, r.ex, func(m bus.Msg) {
		now := time.Now()
		var h msg.HeadCommand
		if m.Decode(&h) != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		k := key{h.Pan, h.Tilt}
		if t0, ok := sent[k]; ok {
			lat = append(lat, now.Sub(t0))
			delete(sent, k) // the router's tick repeats it; count the first
			got <- struct{}{}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Unsubscribe()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		<-tick.C
		k := key{float32(i/100%300 - 150), float32(i%100)/10 - 5}
		req, _ := json.Marshal(map[string]any{"id": i, "type": "command", "target": "head", "action": "move",
			"params": map[string]any{"pan": k.pan, "tilt": k.tilt}})
		mu.Lock()
		sent[k] = time.Now()
		mu.Unlock()
		if err := conn.WriteMessage(websocket.TextMessage, req); err != nil {
			b.Fatal(err)
		}
	}
	timeout := time.After(10 * time.Second)
	for i := 0; i < b.N; i++ {
		select {
		case <-got:
		case <-timeout:
			b.Fatalf("%d of %d commands reached the bus", i, b.N)
		}
	}
	b.StopTimer()
	mu.Lock()
	percentiles(b, lat)
	mu.Unlock()
}

// BenchmarkFanOut publishes HeadState on the bus at 50 Hz to 200 WebSocket
// clients subscribed to "head" and measures, per client and update, the
// time from the bus publish to the client having read the state.
func BenchmarkFanOut(b *testing.B) {
	const clients = 200
	// All clients dial from 127.0.0.1: the per-address cap (64 by
	// default, there against a flood from one host) is raised to let
	// them in, as a deployment expecting that many viewers would.
	broker := mem.NewBroker()
	r := newRobotWith(b, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) {
		o.Gateway.MaxConnsPerAddr = clients
	})
	bb := broker.Connect(nil)
	var mu sync.Mutex
	published := map[float32]time.Time{}
	var lat []time.Duration
	var wg sync.WaitGroup
	ready := make(chan struct{}, clients)
	conns := make([]*websocket.Conn, clients)
	for i := range conns {
		conn, _, err := websocket.DefaultDialer.Dial(r.wsURL(), http.Header{"Authorization": {"Bearer " + r.srv.Token()}})
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		conns[i] = conn
		if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"id":"s","type":"subscribe","topics":["head"]}`)); err != nil {
			b.Fatal(err)
		}
	}
	for _, conn := range conns {
		wg.Add(1)
		go func(conn *websocket.Conn) {
			defer wg.Done()
			subscribed := false
			for {
				_, data, err := conn.ReadMessage()
				if err != nil {
					return
				}
				now := time.Now()
				var m struct {
					Type string
					Data msg.HeadState
				}
				if json.Unmarshal(data, &m) != nil {
					continue
				}
				if m.Type == "response" && !subscribed {
					subscribed = true
					ready <- struct{}{}
					continue
				}
				if m.Type != "state" {
					continue
				}
				mu.Lock()
				if t0, ok := published[m.Data.Pan]; ok {
					lat = append(lat, now.Sub(t0))
				}
				mu.Unlock()
			}
		}(conn)
	}
	for i := 0; i < clients; i++ {
		<-ready
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		<-tick.C
		pan := float32(i%3600)/10 - 180
		mu.Lock()
		published[pan] = time.Now()
		mu.Unlock()
		if err := bb.Publish(msg.TopicHeadState, msg.HeadState{Pan: pan}); err != nil {
			b.Fatal(err)
		}
	}
	// Let the last update arrive.
	_ = bustest.Poll(5*time.Second, 10*time.Millisecond, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(lat) >= b.N*clients
	})
	b.StopTimer()
	mu.Lock()
	delivered := len(lat)
	percentiles(b, lat)
	mu.Unlock()
	var dropped uint64
	for _, ci := range r.srv.Gateway().Clients() {
		dropped += ci.Dropped
	}
	b.ReportMetric(float64(delivered)/float64(b.N*clients)*100, "%delivered")
	b.ReportMetric(float64(dropped), "dropped")
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	if delivered == 0 {
		b.Fatalf("no state delivered to %d clients", clients)
	}
}
