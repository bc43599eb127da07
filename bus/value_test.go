package bus

import (
	"reflect"
	"testing"

	"github.com/saint-os/saint/bus/msg"
)

// The messages published many times a second are copied in process, not
// encoded: the bus/msg types are plain data.
func TestMessageTypesAreCopied(t *testing.T) {
	var ps plans
	for _, v := range []any{
		msg.SimWorld{Models: []string{"head"}}, msg.SimArm{Positions: []float64{1}}, msg.HeadState{},
		msg.NodeStatus{}, msg.BalanceState{}, msg.TrackState{}, msg.Odometry{},
	} {
		p := &Publication{v: v, plans: &ps}
		if err := p.Prepare(false); err != nil || p.encoded {
			t.Errorf("%T: Prepare encoded it (err %v)", v, err)
		}
		c, ok := p.copyAs(reflect.TypeOf(v))
		if !ok {
			t.Errorf("%T is not copied in process", v)
			continue
		}
		if got := reflect.ValueOf(c).Elem().Interface(); !reflect.DeepEqual(got, v) {
			t.Errorf("%T copied as %#v", v, got)
		}
	}
}
