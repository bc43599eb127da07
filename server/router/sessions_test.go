package router

import (
	"errors"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// fakeSessions records Hold and Release, refusing targets in busy.
type fakeSessions struct {
	calls []string
	busy  map[string]bool
}

func (f *fakeSessions) Hold(target string) error {
	f.calls = append(f.calls, "hold "+target)
	if f.busy[target] {
		return errors.New(`motors of head are held by client "policy"`)
	}
	return nil
}

func (f *fakeSessions) Release(target string) { f.calls = append(f.calls, "release "+target) }

// The router holds an output's motors while a route drives it, once, and
// gives them back when the route goes quiet and on an e-stop; an output
// whose motors another client holds is not sent.
func TestOutputSessions(t *testing.T) {
	fs := &fakeSessions{busy: map[string]bool{}}
	rg := newRigOpts(t, Options{Sessions: fs})
	head := func(pan float64) {
		rg.do(func() {
			if err := rg.r.Submit(Input{Source: msg.SourceWebSocket, Target: TargetHead, Command: "move", Values: map[string]float64{"pan": pan}}); err != nil {
				t.Fatal(err)
			}
		})
	}
	head(10)
	rg.run(100 * time.Millisecond)
	head(20)
	rg.run(100 * time.Millisecond)
	if got := fs.calls; len(got) != 1 || got[0] != "hold head" {
		t.Fatalf("calls %v, want one hold of head", got)
	}
	if n := len(rg.got[msg.TopicHeadCmd]); n == 0 {
		t.Fatal("the held head output was not sent")
	}
	// The source goes quiet: released.
	rg.run(2 * time.Second)
	if got := fs.calls; len(got) != 2 || got[1] != "release head" {
		t.Fatalf("calls %v, want the head released once idle", got)
	}
	// Held by someone else: nothing sent.
	fs.busy["head"] = true
	before := len(rg.got[msg.TopicHeadCmd])
	head(30)
	rg.run(100 * time.Millisecond)
	if n := len(rg.got[msg.TopicHeadCmd]); n != before {
		t.Errorf("%d head commands sent while another client held the head", n-before)
	}
	// Free again: held and sent; an e-stop releases it.
	fs.busy["head"] = false
	head(40)
	rg.run(100 * time.Millisecond)
	if n := len(rg.got[msg.TopicHeadCmd]); n == before {
		t.Error("the head output was not sent once free")
	}
	rg.do(func() { rg.r.EStop(msg.SourceWebSocket, "test") })
	if got := fs.calls; got[len(got)-1] != "release head" {
		t.Errorf("calls %v, want the head released by the e-stop", got)
	}
}
