package main

import (
	"strings"
	"testing"
	"time"
)

func TestResultLinesRoundTrip(t *testing.T) {
	r := Result{Name: "can-vesc", OK: true, Detail: `VESC 68 and 56: "quoted", 36.4 V`, Millis: 412.5}
	line := r.Line()
	if !strings.HasPrefix(line, "KERNELCHECK {") || strings.Contains(line, "\n") {
		t.Fatalf("Line() = %q, want one KERNELCHECK line", line)
	}
	// A console puts a carriage return or a kernel message's tail first.
	got, ok, err := ParseLine("\r[   12.3] x" + line + "\r")
	if err != nil || !ok {
		t.Fatalf("ParseLine(%q) = %v, %v", line, ok, err)
	}
	if got != r {
		t.Errorf("round trip gave %+v, want %+v", got, r)
	}
	if got.Duration() != 412500*time.Microsecond {
		t.Errorf("Duration() = %v, want 412.5ms", got.Duration())
	}
	if _, ok, err := ParseLine("BOOTED 7.5"); ok || err != nil {
		t.Errorf("an ordinary line parsed as a result: %v, %v", ok, err)
	}
	for _, bad := range []string{`KERNELCHECK {"name":"x","ok":tru`, `KERNELCHECK {"ok":true}`} {
		if _, ok, err := ParseLine(bad); !ok || err == nil {
			t.Errorf("ParseLine(%q) = %v, %v; want an error for a broken result line", bad, ok, err)
		}
	}
	s := Summary{Passed: 5, Failed: 1}
	if got, ok := ParseEnd("noise " + s.Line()); !ok || got != s {
		t.Errorf("ParseEnd(%q) = %+v, %v", s.Line(), got, ok)
	}
	if _, ok := ParseEnd(line); ok {
		t.Error("a result line parsed as the end line")
	}
}

func TestFlags(t *testing.T) {
	var sink strings.Builder
	c, err := parseFlags([]string{"-can", "vcan0", "-sbus", "/dev/ttyS1", "-rc-channels", "1000, 1500,2000", "-ina219", "0x41", "-timeout", "5s"}, &sink)
	if err != nil {
		t.Fatal(err)
	}
	if c.can != "vcan0" || c.sbus != "/dev/ttyS1" || len(c.channels) != 3 || c.channels[1] != 1500 || c.inaAddr != 0x41 || c.timeout != 5*time.Second {
		t.Errorf("parsed %+v", c)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-sbus", "/dev/ttyS1"}, "-rc-channels"},
		{[]string{"-crsf", "/dev/ttyS2", "-rc-channels", "1000,x"}, "channel 2"},
		{[]string{"-crsf", "/dev/ttyS2", "-rc-channels", "1000,3000"}, "800–2200"},
		{[]string{"-ina219", "0x80"}, "7-bit"},
		{[]string{"-timeout", "0s"}, "positive"},
		{[]string{"extra"}, "unexpected"},
	} {
		if _, err := parseFlags(tc.args, &sink); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseFlags(%q) = %v, want an error about %q", tc.args, err, tc.want)
		}
	}
	if got := FormatChannels([]uint16{1000, 1500}); got != "1000,1500" {
		t.Errorf("FormatChannels = %q", got)
	}
}

func TestRunWithNoChecksReportsNone(t *testing.T) {
	var out, errs strings.Builder
	if code := run(nil, &out, &errs); code != 0 {
		t.Fatalf("run() = %d: %s", code, errs.String())
	}
	if s, ok := ParseEnd(out.String()); !ok || s != (Summary{}) {
		t.Errorf("output %q, want an end line with no checks", out.String())
	}
}
