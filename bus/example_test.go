package bus_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
)

// Two "processes" on one in-process bus, on a virtual clock: a head node
// that serves a service and publishes its state, and a server that calls it
// and subscribes.
func Example() {
	ex := executor.NewVirtual()
	start := ex.Now()
	br := mem.NewBroker()
	server, head := br.Connect(nil), br.Connect(nil)
	defer server.Close()
	defer head.Close()

	type headState struct {
		Pan float32 `json:"pan"`
	}
	bus.SubscribeJSON(server, "/saint/+/state", bus.QoS{Depth: 1}, ex, func(topic string, s headState) {
		fmt.Printf("%v %s pan=%v\n", ex.Now().Sub(start), topic, s.Pan)
	})
	bus.ServeJSON(head, "/saint/head/home", ex, func(req struct{}, reply func(string, error)) {
		// Answer once the move has finished.
		ex.After(30*time.Millisecond, func() {
			head.Publish("/saint/head/state", headState{Pan: 0})
			reply("homed", nil)
		})
	})

	ex.Post(func() {
		head.Publish("/saint/head/state", headState{Pan: 45})
		bus.CallAsyncJSON(server, "/saint/head/home", struct{}{}, time.Second, ex, func(s string, err error) {
			fmt.Printf("%v home: %s %v\n", ex.Now().Sub(start), s, err)
		})
		server.CallAsync("/saint/arms/home", nil, time.Second, ex, func(_ bus.Msg, err error) {
			fmt.Printf("%v arms: no responders: %v\n", ex.Now().Sub(start), errors.Is(err, bus.ErrNoResponders))
		})
	})
	ex.RunFor(context.Background(), time.Second)
	// Output:
	// 0s /saint/head/state pan=45
	// 0s arms: no responders: true
	// 30ms /saint/head/state pan=0
	// 30ms home: homed <nil>
}
