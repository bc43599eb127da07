package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/saint-os/saint/bus/natsbus"
)

const enrolUsage = "usage: nodes enrol NODE --out DIR [--ca-sha256 HEX]"

// enrolNode is nodes enrol: it gives a node its bus identity before its
// first boot — a key pair and the fingerprint of the server's bus CA,
// written to DIR (the node's state directory, or the files flash_node.sh
// copies there) — and registers the key with the server (enrol_node). The
// node then connects only to that server, and the server knows its key.
// An existing key in DIR is kept, so enrolling again is harmless.
func enrolNode(ctx context.Context, c *client, out, warn io.Writer, args []string) error {
	f := flag.NewFlagSet("nodes enrol", flag.ContinueOnError)
	dir := f.String("out", "", "the node's state directory, or a directory of files for it: "+natsbus.NodeKeyFile+" (its key, 0600) and "+natsbus.NodeEnrolledCAFile+" are written there (required)")
	want := f.String("ca-sha256", "", "the server's bus CA fingerprint as saint-server logs it at start (ca_sha256) and the web UI's system status shows it: nothing is enrolled if the server answers with another")
	pos, err := parseInterleaved(f, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *dir == "" {
		return errors.New(enrolUsage)
	}
	id := pos[0]
	// The server's CA first: a server that is not the expected one is told
	// nothing.
	var listed struct {
		CASHA256 string `json:"ca_sha256"`
	}
	data, err := c.call(ctx, "management", "list_enrolled_nodes", nil)
	if err != nil {
		return fmt.Errorf("nodes enrol: %w", err)
	}
	if err := json.Unmarshal(data, &listed); err != nil {
		return fmt.Errorf("nodes enrol: list_enrolled_nodes: %w", err)
	}
	ca, err := natsbus.ParseCAFingerprint(listed.CASHA256)
	if err != nil {
		return fmt.Errorf("nodes enrol: the server reports no usable bus CA (%v)", err)
	}
	if *want != "" {
		w, err := natsbus.ParseCAFingerprint(*want)
		if err != nil {
			return fmt.Errorf("nodes enrol: --ca-sha256: %w", err)
		}
		if w != ca {
			return fmt.Errorf("nodes enrol: the server's bus CA is %s, not the %s given with --ca-sha256: this is not the server you meant; nothing was enrolled", ca, w)
		}
	} else {
		fmt.Fprintf(warn, "saintctl: nodes enrol: the server's bus CA is %s: compare it with the ca_sha256 saint-server logs at start (or pass --ca-sha256)\n", ca)
	}
	key, err := natsbus.LoadOrCreateKey(filepath.Join(*dir, natsbus.NodeKeyFile))
	if err != nil {
		return fmt.Errorf("nodes enrol: %w", err)
	}
	pub, err := key.PublicKey()
	if err != nil {
		return fmt.Errorf("nodes enrol: %w", err)
	}
	if _, err := c.call(ctx, "management", "enrol_node", map[string]any{"node_id": id, "bus_key": pub}); err != nil {
		return fmt.Errorf("nodes enrol: %w", err)
	}
	if err := natsbus.WriteCAFingerprintFile(filepath.Join(*dir, natsbus.NodeEnrolledCAFile), ca); err != nil {
		return fmt.Errorf("nodes enrol: %w", err)
	}
	// A CA pinned before (by trusting the first server) is not the
	// enrolment; the node writes the enrolled one there at first contact.
	if err := os.Remove(filepath.Join(*dir, natsbus.NodeCAFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("nodes enrol: %w", err)
	}
	fmt.Fprintf(out, "enrolled %s: bus key %s, server CA sha256 %s (in %s)\n", id, pub, ca, *dir)
	return nil
}
