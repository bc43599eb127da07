package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/saint-os/saint/fwsign"
	"github.com/saint-os/saint/server/firmware"
)

const signDowngradeUsage = "firmware sign-downgrade --sign-key FILE --version V [--out DIR]"

// signDowngrade is firmware sign-downgrade: the release key's permission
// for nodes that have installed a newer version to go back to version. It
// prints the permission (base64) and, with --out, writes it into the
// manifest of that firmware directory, which must publish version.
func signDowngrade(args []string, out io.Writer) error {
	f := flag.NewFlagSet("firmware sign-downgrade", flag.ContinueOnError)
	keyFile := f.String("sign-key", "", "the release private key (firmware keygen) that signed the release (required)")
	version := f.String("version", "", "the version nodes may go back to (required)")
	dir := f.String("out", "", "a firmware directory publishing that version: its manifest.json gets the permission")
	if err := f.Parse(args); err != nil {
		return err
	}
	if *keyFile == "" || *version == "" || f.NArg() > 0 {
		return errors.New("usage: " + signDowngradeUsage)
	}
	key, err := fwsign.ReadPrivateFile(*keyFile)
	if err != nil {
		return fmt.Errorf("firmware sign-downgrade: --sign-key: %w", err)
	}
	if *dir == "" {
		fmt.Fprintln(out, fwsign.SignDowngrade(key, *version))
		return nil
	}
	m, err := firmware.PermitDowngrade(*dir, key, *version)
	if err != nil {
		return fmt.Errorf("firmware sign-downgrade: %w", err)
	}
	fmt.Fprintln(out, m.Firmware.DowngradeSignature)
	fmt.Fprintf(out, "downgrade to %s permitted in %s: restart saint-server to offer it, then force an update (saintctl call management trigger_update '{\"node_id\":\"NODE\",\"force\":true}')\n", *version, *dir)
	return nil
}
