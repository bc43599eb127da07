package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/hal/can/cantest"
	"github.com/saint-os/saint/hal/clock"
)

// The checks pass with their twins on the same bus (cantest's loopback, in
// place of a vcan interface's two sockets).
func TestCANChecksPassWithTwinsOnTheBus(t *testing.T) {
	ex := bustest.RunExecutor(t)
	bus := cantest.New(clock.Real{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	detail, err := checkVESC(ctx, bus, bus, ex)
	if err != nil {
		t.Fatalf("checkVESC: %v", err)
	}
	if !strings.Contains(detail, "1500/-1500 ERPM") {
		t.Errorf("VESC detail %q, want the twins' speeds", detail)
	}
	detail, err = checkMITArm(ctx, bus, bus, ex)
	if err != nil {
		t.Fatalf("checkMITArm: %v", err)
	}
	if !strings.Contains(detail, "5 actuators") {
		t.Errorf("MIT detail %q", detail)
	}
}

// With the twins on a bus the drivers do not reach, both checks fail,
// naming what did not arrive.
func TestCANChecksFailWithoutTheirTwins(t *testing.T) {
	ex := bustest.RunExecutor(t)
	driver, elsewhere := cantest.New(clock.Real{}), cantest.New(clock.Real{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := checkVESC(ctx, driver, elsewhere, ex); err == nil || !strings.Contains(err.Error(), "VESC 68: commanded rpm 3000, received off") {
		t.Errorf("checkVESC with no twin reachable = %v, want the missing RPM command named", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, err := checkMITArm(ctx2, driver, elsewhere, ex); err == nil || !strings.Contains(err.Error(), "actuator 1: no reply to enable") {
		t.Errorf("checkMITArm with no twin reachable = %v, want actuator 1's missing reply", err)
	}
}
