package world_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/sim/world"
)

// Whatever arrives on /saint/sim/disturb, the world neither panics nor
// loses its finite state.
func FuzzDisturb(f *testing.F) {
	for _, s := range []string{
		`{"kind":"push","target":"mass","force":[1,0,0],"duration_s":0.01}`,
		`{"kind":"push","target":"mass","force":[1e308,1e308,0],"duration_s":1e-300}`,
		`{"kind":"push","target":"mass","duration_s":-1}`,
		`{"kind":"impulse","target":"mass","impulse":[-5,0,0]}`,
		`{"kind":"kill","target":"mass"}`,
		`{"kind":"cut_link","target":""}`,
		`{"kind":"","target":"pendulum"}`,
		`{}`, `[]`, `nonsense`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var req msg.SimDisturbRequest
		if json.Unmarshal(data, &req) != nil {
			return
		}
		w, m, _ := newWorld(t, executor.NewVirtual(), world.Options{})
		_ = w.Disturb(req)
		for i := 0; i < 5; i++ {
			w.Step()
		}
		if math.IsNaN(m.v) && !math.IsNaN(req.Force[0]) {
			t.Errorf("%s made the state NaN", data)
		}
	})
}

func BenchmarkWorldStep(b *testing.B) {
	w, _, _ := newWorld(b, executor.NewVirtual(), world.Options{Hash: true})
	for i := 0; i < b.N; i++ {
		w.Step()
	}
}
