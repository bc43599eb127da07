package mem_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// received subscribes with SubscribeJSON[T] and returns what arrived,
// after running the executor.
func received[T any](t *testing.T, b bus.Bus, ex *executor.Executor, topic string) *[]T {
	t.Helper()
	var got []T
	if _, err := bus.SubscribeJSON(b, topic, bus.QoS{Depth: 100}, ex, func(_ string, v T) { got = append(got, v) }); err != nil {
		t.Fatal(err)
	}
	return &got
}

func run(t *testing.T, ex *executor.Executor) {
	t.Helper()
	if err := ex.RunFor(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}

// roundTrip is what a subscriber gets on the wire: v encoded, then
// decoded into a fresh T.
func roundTrip[T any](t *testing.T, v any) T {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type withHidden struct {
	Shown  float64
	Hidden float64 `json:"-"`
	inner  int
}

type withTime struct {
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
}

type nested struct {
	Name   string             `json:"name"`
	Series [][]float64        `json:"series"`
	Tags   map[string]string  `json:"tags"`
	Arr    [2]msg.NodeSummary `json:"arr"`
	Bytes  []byte             `json:"bytes"`
	Empty  []int              `json:"empty"`
	Nil    []int              `json:"nil"`
}

// A value delivered in process is what the JSON round trip gives, for
// plain message types and for those JSON treats specially (hidden and
// unexported fields, times, invalid UTF-8), which go through JSON.
func TestInProcessValueIsTheJSONRoundTrip(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()

	check := func(name string, publish func() error, compare func() (got, want any)) {
		t.Helper()
		if err := publish(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		run(t, ex)
		if got, want := compare(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", name, got, want)
		}
	}
	arm := msg.SimArm{Side: "left", Positions: []float64{1, -0.5, math.Copysign(0, -1)}, Tip: [3]float64{1, 2, 3}, Holding: true}
	gotArm := received[msg.SimArm](t, sub, ex, "/t/arm")
	check("SimArm", func() error { return pub.Publish("/t/arm", arm) },
		func() (any, any) { return *gotArm, []msg.SimArm{roundTrip[msg.SimArm](t, arm)} })

	h := withHidden{Shown: 1, Hidden: 2, inner: 3}
	gotH := received[withHidden](t, sub, ex, "/t/hidden")
	check("hidden fields", func() error { return pub.Publish("/t/hidden", h) },
		func() (any, any) { return *gotH, []withHidden{roundTrip[withHidden](t, h)} })

	tm := withTime{At: time.Now().In(time.FixedZone("X", 3600))}
	gotT := received[withTime](t, sub, ex, "/t/time")
	check("time", func() error { return pub.Publish("/t/time", tm) },
		func() (any, any) { return *gotT, []withTime{roundTrip[withTime](t, tm)} })

	n := nested{Name: "bad \xff utf-8", Series: [][]float64{{1}, nil, {}}, Tags: map[string]string{"a": "b"},
		Arr: [2]msg.NodeSummary{{NodeID: "x"}}, Bytes: []byte{0, 1, 255}, Empty: []int{}}
	gotN := received[nested](t, sub, ex, "/t/nested")
	check("invalid UTF-8", func() error { return pub.Publish("/t/nested", n) },
		func() (any, any) { return *gotN, []nested{roundTrip[nested](t, n)} })
	n.Name = "fine"
	*gotN = nil
	check("nested", func() error { return pub.Publish("/t/nested", n) },
		func() (any, any) { return *gotN, []nested{roundTrip[nested](t, n)} })

	// Another type with the same shape decodes from JSON, as on the wire.
	type armView struct {
		Side      string    `json:"side"`
		Positions []float64 `json:"positions"`
	}
	gotV := received[armView](t, sub, ex, "/t/arm2")
	check("another type", func() error { return pub.Publish("/t/arm2", arm) },
		func() (any, any) { return *gotV, []armView{roundTrip[armView](t, arm)} })
}

// Subscribers get copies: neither the publisher changing its value after
// publishing nor one subscriber changing what it got reaches another.
func TestInProcessValuesAreCopies(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()
	var first, second []msg.SimArm
	var raw []string
	bus.SubscribeJSON(sub, "/t/arm", bus.QoS{}, ex, func(_ string, a msg.SimArm) {
		a.Positions[0] = 99 // the first subscriber scribbles on its copy
		first = append(first, a)
	})
	sub.Subscribe("/t/arm", bus.QoS{}, ex, func(m bus.Msg) { raw = append(raw, string(m.Data)) })
	bus.SubscribeJSON(sub, "/t/+", bus.QoS{}, ex, func(_ string, a msg.SimArm) { second = append(second, a) })
	arm := msg.SimArm{Side: "left", Positions: []float64{1, 2}}
	if err := pub.Publish("/t/arm", arm); err != nil {
		t.Fatal(err)
	}
	arm.Positions[1] = 42 // the publisher reuses its slice
	run(t, ex)
	if len(first) != 1 || len(second) != 1 || len(raw) != 1 {
		t.Fatalf("deliveries: %d, %d typed, %d raw", len(first), len(second), len(raw))
	}
	if second[0].Positions[0] != 1 || second[0].Positions[1] != 2 {
		t.Errorf("second subscriber got %v, want [1 2]", second[0].Positions)
	}
	if want, _ := json.Marshal(msg.SimArm{Side: "left", Positions: []float64{1, 2}}); raw[0] != string(want) {
		t.Errorf("raw subscriber got %s, want %s", raw[0], want)
	}
}

// A value JSON cannot encode fails the publication and reaches nobody,
// whoever subscribes.
func TestInProcessUnencodableValue(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()
	bad := msg.SimArm{Positions: []float64{math.NaN()}}
	if err := pub.Publish("/t/nobody", bad); err == nil || !strings.Contains(err.Error(), "encoding") {
		t.Errorf("NaN to nobody: error %v, want an encoding error", err)
	}
	got := received[msg.SimArm](t, sub, ex, "/t/arm")
	if err := pub.Publish("/t/arm", bad); err == nil || !strings.Contains(err.Error(), "encoding") {
		t.Errorf("NaN to a typed subscriber: error %v, want an encoding error", err)
	}
	if err := pub.Publish("/t/arm", map[string]any{"x": math.Inf(1)}); err == nil {
		t.Error("Inf in a map: no error")
	}
	run(t, ex)
	if len(*got) != 0 {
		t.Errorf("the subscriber got %v", *got)
	}
}

func BenchmarkPublishTyped(b *testing.B) {
	ex := executor.NewVirtual()
	bb := mem.New()
	defer bb.Close()
	for range 2 {
		bus.SubscribeJSON(bb, "/saint/sim/truth/arm_left", bus.QoS{Depth: 1}, ex, func(string, msg.SimArm) {})
	}
	arm := msg.SimArm{Side: "left", Positions: make([]float64, 5), Velocities: make([]float64, 5), Efforts: make([]float64, 5)}
	b.ReportAllocs()
	for b.Loop() {
		bb.Publish("/saint/sim/truth/arm_left", arm)
		_ = ex.RunFor(context.Background(), 0)
	}
}

// BenchmarkPublishDecoded is BenchmarkPublishTyped the way it goes on the
// wire: encoded once, decoded by each subscriber.
func BenchmarkPublishDecoded(b *testing.B) {
	ex := executor.NewVirtual()
	bb := mem.New()
	defer bb.Close()
	for range 2 {
		bb.Subscribe("/saint/sim/truth/arm_left", bus.QoS{Depth: 1}, ex, func(m bus.Msg) {
			var a msg.SimArm
			_ = json.Unmarshal(m.Data, &a)
		})
	}
	arm := msg.SimArm{Side: "left", Positions: make([]float64, 5), Velocities: make([]float64, 5), Efforts: make([]float64, 5)}
	b.ReportAllocs()
	for b.Loop() {
		bb.Publish("/saint/sim/truth/arm_left", arm)
		_ = ex.RunFor(context.Background(), 0)
	}
}

// SubscribeValues gets a copy of a plain value, not its JSON, and the
// JSON of a value JSON treats specially.
func TestSubscribeValuesInProcess(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()
	var got []any
	bus.SubscribeValues(sub, "/t/+", bus.QoS{}, ex, func(_ string, v any) { got = append(got, v) })
	arm := msg.SimArm{Side: "left", Positions: []float64{1}}
	pub.Publish("/t/arm", arm)
	pub.Publish("/t/time", withTime{At: time.Unix(0, 0).UTC()})
	arm.Positions[0] = 2
	run(t, ex)
	if len(got) != 2 {
		t.Fatalf("got %d messages", len(got))
	}
	if a, ok := got[0].(*msg.SimArm); !ok || a.Positions[0] != 1 {
		t.Errorf("plain value arrived as %#v, want a *msg.SimArm copy", got[0])
	}
	if raw, ok := got[1].(json.RawMessage); !ok || string(raw) != `{"at":"1970-01-01T00:00:00Z"}` {
		t.Errorf("time value arrived as %#v, want its JSON", got[1])
	}
}

// A subscription made or ended between two publications to the same topic
// takes effect at once (the broker remembers which subscriptions match a
// subject until they change).
func TestSubscriptionsChangeBetweenPublications(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()
	var got []string
	record := func(name string) bus.Handler {
		return func(m bus.Msg) { got = append(got, name+" "+string(m.Data)) }
	}
	a, _ := sub.Subscribe("/t/x", bus.QoS{}, ex, record("a"))
	pub.Publish("/t/x", 1)
	sub.Subscribe("/t/+", bus.QoS{}, ex, record("wild"))
	pub.Publish("/t/x", 2)
	run(t, ex)
	a.Unsubscribe()
	pub.Publish("/t/x", 3)
	run(t, ex)
	slices.Sort(got) // each subscription keeps its order; between them, any
	if want := "a 1,a 2,wild 2,wild 3"; strings.Join(got, ",") != want {
		t.Errorf("deliveries %q, want %q", strings.Join(got, ","), want)
	}
}

// A SubscribeValuesOf subscription takes its types as copies, without
// JSON, and everything else as JSON.
func TestSubscribeValuesOfInProcess(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()
	var got []bus.Msg
	if _, err := bus.SubscribeValuesOf(sub, "/t/+", bus.QoS{}, ex, func(m bus.Msg) { got = append(got, m) }, reflect.TypeFor[msg.Image]()); err != nil {
		t.Fatal(err)
	}
	img := msg.Image{Width: 1, Height: 1, Step: 3, Encoding: msg.ImageRGB8, Data: []byte{1, 2, 3}}
	pub.Publish("/t/image", img)
	pub.Publish("/t/arm", msg.SimArm{Side: "left"})
	img.Data[0] = 9
	run(t, ex)
	if len(got) != 2 {
		t.Fatalf("got %d messages, want 2", len(got))
	}
	if v, ok := got[0].Value().(*msg.Image); !ok || got[0].Data != nil || got[0].Topic != "/t/image" || !bytes.Equal(v.Data, []byte{1, 2, 3}) {
		t.Errorf("image arrived as %+v (value %#v), want a copy of the published one and no JSON", got[0], got[0].Value())
	}
	if got[1].Value() != nil || !json.Valid(got[1].Data) || !strings.Contains(string(got[1].Data), `"left"`) {
		t.Errorf("arm arrived as %+v, want its JSON and no value", got[1])
	}
}
