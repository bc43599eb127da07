package teleop

import (
	"reflect"
	"testing"
	"time"
)

const tick = time.Second / 60

func TestDriveRepeatsWhileHeldAndStopsOnRelease(t *testing.T) {
	tp := New(Options{Linear: 0.5, Angular: 1, Resend: 100 * time.Millisecond})
	var drives []Command
	for i := 0; i < 60; i++ { // one second of W+A
		drives = append(drives, tp.Tick(Forward|Left, tick)...)
	}
	if len(drives) < 9 || len(drives) > 11 {
		t.Fatalf("%d drive commands in 1 s at a 100 ms resend, want about 10", len(drives))
	}
	want := Command{"tracks", "drive", map[string]any{"linear": 0.5, "angular": 1.0}}
	if !reflect.DeepEqual(drives[0], want) {
		t.Errorf("first command = %+v, want %+v", drives[0], want)
	}
	got := tp.Tick(0, tick)
	if !reflect.DeepEqual(got, []Command{{"tracks", "stop", nil}}) {
		t.Errorf("on release = %+v, want one tracks stop", got)
	}
	if got := tp.Tick(0, tick); len(got) != 0 {
		t.Errorf("idle tick sent %+v", got)
	}
}

func TestEStopOnPressOnly(t *testing.T) {
	tp := New(Options{})
	got := tp.Tick(EStop, tick)
	want := []Command{{"tracks", "estop", map[string]any{"enable": true}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("space = %+v, want %+v", got, want)
	}
	if got := tp.Tick(EStop, tick); len(got) != 0 {
		t.Errorf("space still held sent %+v", got)
	}
	got = tp.Tick(Clear, tick)
	if want := []Command{{"tracks", "estop", map[string]any{"enable": false}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("C = %+v, want %+v", got, want)
	}
}

func TestHeadKeysIntegrateAndClamp(t *testing.T) {
	tp := New(Options{HeadRate: 30})
	var last Command
	for i := 0; i < 60; i++ {
		for _, c := range tp.Tick(HeadRight|HeadUp, tick) {
			last = c
		}
	}
	pan, tilt := tp.HeadTarget()
	if pan > -29.9 || pan < -30.1 || tilt < 29.9 || tilt > 30.1 {
		t.Fatalf("after 1 s of L+I at 30°/s target = (%v, %v), want (-30, 30)", pan, tilt)
	}
	if last.Target != "head" || last.Action != "move" {
		t.Fatalf("last command %+v, want a head move", last)
	}
	for i := 0; i < 600; i++ {
		tp.Tick(HeadUp, tick)
	}
	if _, tilt := tp.HeadTarget(); tilt != 90 {
		t.Errorf("tilt held up for 10 s = %v, want clamped at 90", tilt)
	}
}

func TestParseScript(t *testing.T) {
	s, err := ParseScript("w+a:1.5s, space ,-:1s,c:200ms")
	if err != nil {
		t.Fatal(err)
	}
	want := Script{{Forward | Left, 1500 * time.Millisecond}, {EStop, 100 * time.Millisecond}, {0, time.Second}, {Clear, 200 * time.Millisecond}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("script = %+v, want %+v", s, want)
	}
	if got := s.Duration(); got != 2800*time.Millisecond {
		t.Errorf("duration = %v", got)
	}
	for _, tc := range []struct {
		at   time.Duration
		want Keys
	}{{0, Forward | Left}, {1499 * time.Millisecond, Forward | Left}, {1550 * time.Millisecond, EStop}, {2 * time.Second, 0}, {2700 * time.Millisecond, Clear}, {time.Hour, 0}} {
		if got := s.KeysAt(tc.at); got != tc.want {
			t.Errorf("KeysAt(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
	for _, bad := range []string{"x:1s", "w:soon", "w:-1s"} {
		if _, err := ParseScript(bad); err == nil {
			t.Errorf("ParseScript(%q) succeeded", bad)
		}
	}
}
