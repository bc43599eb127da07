package router_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing/fstest"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/router"
)

// An RC stick drives the head through a mapped route: the stick half right
// (normalised 0.5) turns the head 45° right, pan −45° (positive pan looks
// left).
func ExampleRouter_Submit() {
	ex := executor.NewVirtual()
	b := mem.New()
	defer b.Close()
	presets := fstest.MapFS{"default.yaml": {Data: []byte(`
routes:
  - id: rc_head
    enabled: true
    priority: 300
    input: {source: rc}
    output: {target: head}
    mapping:
      - {from: channel_4, to: pan, scale: -90.0, deadzone: 0.05}
`)}}
	r, err := router.New(router.Options{Exec: ex, Bus: b, Presets: presets, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	ex.Post(func() {
		_ = r.Start()
		_, _ = bus.SubscribeJSON(b, msg.TopicHeadCmd, bus.QoS{}, ex, func(_ string, h msg.HeadCommand) {
			fmt.Printf("head pan %.0f\n", h.Pan)
		})
		_ = r.Submit(router.Input{Source: msg.SourceRC, Values: map[string]float64{"channel_4": 0.5}})
	})
	// One tick at 50 Hz.
	_ = ex.RunFor(context.Background(), router.Options{}.TickPeriod())
	// Output: head pan -45
}
