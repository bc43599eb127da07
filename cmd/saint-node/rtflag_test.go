package main

import (
	"flag"
	"io"
	"testing"
)

func TestRTFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		bad  bool
	}{
		{nil, "auto", false},
		{[]string{"--rt"}, "true", false},
		{[]string{"--rt=false"}, "false", false},
		{[]string{"--rt=auto"}, "auto", false},
		{[]string{"--rt=sometimes"}, "", true},
	} {
		fs := flag.NewFlagSet("saint-node", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := rtFlag("auto")
		fs.Var(&f, "rt", "")
		err := fs.Parse(tc.args)
		if tc.bad {
			if err == nil {
				t.Errorf("%v accepted as %q", tc.args, f)
			}
			continue
		}
		if err != nil || string(f) != tc.want {
			t.Errorf("%v: got %q, %v; want %q", tc.args, f, err, tc.want)
		}
	}
}
