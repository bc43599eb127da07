package main

import (
	"strings"
	"testing"
)

func TestJitterCommand(t *testing.T) {
	var out strings.Builder
	if err := run([]string{"jitter", "--period", "2ms", "--duration", "40ms", "--rt"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"time.Ticker", "executor ", "executor, rt mode", "p99.9", "20 samples"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, bad := range [][]string{
		{"jitter", "--period", "0s"},
		{"jitter", "--load", "earthquake", "--duration", "10ms"},
		{"jitter", "extra"},
	} {
		if err := run(bad, &out); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
