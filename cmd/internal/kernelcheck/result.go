package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Result is the outcome of one check.
type Result struct {
	Name   string  `json:"name"`
	OK     bool    `json:"ok"`
	Detail string  `json:"detail"`
	Millis float64 `json:"duration_ms"`
}

// Markers that start the machine-readable lines in a console stream.
const (
	resultMarker = "KERNELCHECK "
	endMarker    = "KERNELCHECK-END "
)

// Line formats r as one console line (without the newline).
func (r Result) Line() string {
	b, err := json.Marshal(r)
	if err != nil {
		// A struct of strings, a bool and a float: only a NaN fails.
		b = []byte(fmt.Sprintf(`{"name":%q,"ok":false,"detail":"unprintable result"}`, r.Name))
	}
	return resultMarker + string(b)
}

// Duration returns how long the check took.
func (r Result) Duration() time.Duration { return time.Duration(r.Millis * float64(time.Millisecond)) }

// ParseLine returns the result a console line carries, if it is one. A
// console can put noise (a kernel message, a carriage return) before the
// marker; it is skipped.
func ParseLine(line string) (Result, bool, error) {
	i := strings.Index(line, resultMarker)
	if i < 0 {
		return Result{}, false, nil
	}
	var r Result
	if err := json.Unmarshal([]byte(strings.TrimSpace(line[i+len(resultMarker):])), &r); err != nil {
		return Result{}, true, fmt.Errorf("kernelcheck: result line %q: %w", line, err)
	}
	if r.Name == "" {
		return Result{}, true, fmt.Errorf("kernelcheck: result line %q: no check name", line)
	}
	return r, true, nil
}

// Summary is the run's last line.
type Summary struct {
	Passed int `json:"passed"`
	Failed int `json:"failed"`
}

// Line formats s as the end line.
func (s Summary) Line() string {
	b, _ := json.Marshal(s)
	return endMarker + string(b)
}

// ParseEnd returns the summary an end line carries, if it is one.
func ParseEnd(line string) (Summary, bool) {
	i := strings.Index(line, endMarker)
	if i < 0 {
		return Summary{}, false
	}
	var s Summary
	if json.Unmarshal([]byte(strings.TrimSpace(line[i+len(endMarker):])), &s) != nil {
		return Summary{}, false
	}
	return s, true
}

// waitFor calls f every interval until it returns nil or ctx ends; then it
// returns f's last error.
func waitFor(ctx context.Context, interval time.Duration, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
		case <-time.After(interval):
		}
	}
}
