package router

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/router/target"
)

// fakeSessions records Hold and Release (a run of holds as one), refusing
// targets in busy and answering ErrHoldPending for the first holds of
// targets in slow.
type fakeSessions struct {
	calls []string
	holds int
	busy  map[string]bool
	slow  map[string]int
}

func (f *fakeSessions) Hold(target string) error {
	f.holds++
	if n := len(f.calls); n == 0 || f.calls[n-1] != "hold "+target {
		f.calls = append(f.calls, "hold "+target)
	}
	if f.slow[target] > 0 {
		f.slow[target]--
		return ErrHoldPending
	}
	if f.busy[target] {
		return errors.New(`motors of head are held by client "policy"`)
	}
	return nil
}

func (f *fakeSessions) Release(target string) { f.calls = append(f.calls, "release "+target) }

// The router holds an output's motors while a route drives it (asking at
// every message it sends), and
// gives them back when the route goes quiet and on an e-stop; an output
// whose motors another client holds is not sent.
func TestOutputSessions(t *testing.T) {
	fs := &fakeSessions{busy: map[string]bool{}}
	rg := newRigOpts(t, Options{Sessions: fs})
	head := func(pan float64) {
		rg.do(func() {
			if err := rg.r.Submit(Input{Source: msg.SourceWebSocket, Target: target.Head, Command: "move", Values: map[string]float64{"pan": pan}}); err != nil {
				t.Fatal(err)
			}
		})
	}
	head(10)
	rg.run(100 * time.Millisecond)
	head(20)
	rg.run(100 * time.Millisecond)
	if got := fs.calls; len(got) != 1 || got[0] != "hold head" || fs.holds < 5 {
		t.Fatalf("calls %v (%d holds), want the head held at every tick", got, fs.holds)
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

// While the motors are being taken the output waits: nothing is sent and
// nothing is reported; once held it is sent.
func TestOutputSessionPending(t *testing.T) {
	fs := &fakeSessions{busy: map[string]bool{}, slow: map[string]int{"head": 3}}
	var events []string
	rg := newRigOpts(t, Options{Sessions: fs, OnEvent: func(level, m string) { events = append(events, m) }})
	rg.do(func() {
		if err := rg.r.Submit(Input{Source: msg.SourceWebSocket, Target: target.Head, Command: "move", Values: map[string]float64{"pan": 10}}); err != nil {
			t.Fatal(err)
		}
	})
	rg.run(50 * time.Millisecond) // two ticks: pending
	if n := len(rg.got[msg.TopicHeadCmd]); n != 0 {
		t.Fatalf("%d head commands sent before its motors were held", n)
	}
	rg.run(100 * time.Millisecond)
	if n := len(rg.got[msg.TopicHeadCmd]); n == 0 {
		t.Fatal("the head output was not sent once held")
	}
	for _, e := range events {
		if strings.Contains(e, "not sent") {
			t.Errorf("event %q while the motors were being taken", e)
		}
	}
}
