package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/saint-os/saint/ros2/sros2"
)

const ros2Usage = `usage: ros2 keystore create DIR
       ros2 keystore enclave DIR NAME [--publish LIST] [--subscribe LIST] [--call LIST] [--serve LIST]`

// ros2Cmd is ros2 keystore: SROS2-style keystores for the ROS 2 bridge's
// DDS Security (saint-ros2 --ros2-security) and the ROS 2 workstations
// that may talk to it.
func ros2Cmd(args []string, out io.Writer) error {
	if len(args) < 2 || args[0] != "keystore" {
		return errors.New(ros2Usage)
	}
	switch args[1] {
	case "create":
		if len(args) != 3 {
			return errors.New(ros2Usage)
		}
		k, err := sros2.Create(args[2])
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "keystore %s: CA %s (keep %s off the robot and the workstations)\n", k.Dir, sros2.CACertFile, sros2.CAKeyFile)
		return nil
	case "enclave":
		return enclaveCmd(args[2:], out)
	}
	return fmt.Errorf("ros2 keystore %s: want create or enclave\n%s", args[1], ros2Usage)
}

// nameList is a flag of comma-separated ROS names that tells "not given"
// (nil: every name) from "given empty" (none).
type nameList struct{ names *[]string }

func (l nameList) String() string {
	if l.names == nil || *l.names == nil {
		return ""
	}
	return strings.Join(*l.names, ",")
}

func (l nameList) Set(s string) error {
	*l.names = []string{}
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*l.names = append(*l.names, n)
		}
	}
	return nil
}

func enclaveCmd(args []string, out io.Writer) error {
	f := flag.NewFlagSet("ros2 keystore enclave", flag.ContinueOnError)
	var p sros2.Policy
	const each = " (comma-separated absolute ROS names or patterns, * matching anything, / included; default: all; empty: none)"
	f.Var(nameList{&p.Publish}, "publish", "topics the enclave may publish"+each)
	f.Var(nameList{&p.Subscribe}, "subscribe", "topics it may subscribe to"+each)
	f.Var(nameList{&p.Call}, "call", "services it may call"+each)
	f.Var(nameList{&p.Serve}, "serve", "services it may answer"+each)
	pos, err := parseInterleaved(f, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return errors.New(ros2Usage)
	}
	if err := p.Check(); err != nil {
		return err
	}
	k, err := sros2.Open(pos[0])
	if err != nil {
		return err
	}
	dir, err := k.CreateEnclave(pos[1], p)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "enclave %s: %s\n", pos[1], dir)
	return nil
}
