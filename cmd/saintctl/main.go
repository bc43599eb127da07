// Command saintctl drives a SAINT.OS server from the command line over its
// WebSocket API.
//
// The API token comes from --token, --token-file or $SAINT_TOKEN.
//
//	saintctl [--server URL] nodes list          adopted and unadopted nodes
//	saintctl [--server URL] nodes unadopted     unadopted nodes with GPIO status (JSON)
//	saintctl [--server URL] nodes enrol NODE --out DIR [--ca-sha256 HEX]   a node's key and its server's CA, before first boot
//	saintctl [--server URL] nodes enrolled      the enrolled nodes (JSON)
//	saintctl [--server URL] adopt NODE ROLE [--instance left|right] [--name NAME] [--bus-key KEY]
//	saintctl [--server URL] reset NODE [--factory]
//	saintctl [--server URL] info NODE
//	saintctl [--server URL] call TYPE ACTION [JSON-PARAMS]
//	saintctl [--server URL] balance CMD [ARGS...]   the balancing base's debug console
//	saintctl firmware publish --image FILE --version V [--configs DIR] [--out DIR] [--sign-key FILE [--allow-downgrade]]
//	saintctl firmware sign-downgrade --sign-key FILE --version V [--out DIR]
//	saintctl firmware keygen [--out DIR] [--name NAME]
//	saintctl firmware pubkey --key FILE
//	saintctl firmware upload FILE --version V [--server http://HOST[:PORT]] [--token T] [--sign-key FILE]
//	saintctl livelink replay FILE --to HOST:PORT [--speed X] [--loop] [--subject NAME]
//	saintctl rc send --device PATH --protocol sbus|ibus|crsf --ch US,US,... [--rate HZ] [--count N]
//	saintctl jitter [--period D] [--duration D] [--rt] [--load none|cpu|cpu+gc|goroutines|all]
//	saintctl [--server URL] record start|stop|status   a recording on the server (MCAP files in its recordings/ directory)
//	saintctl mcap info FILE [--json]    topics, message counts, rates and time range of a recording
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/saint-os/saint/fwsign"
	"github.com/saint-os/saint/server/firmware"
	"github.com/saint-os/saint/server/ws/wsclient"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "saintctl:", err)
		os.Exit(1)
	}
}

const usage = `usage: saintctl [--server URL] [--token T | --token-file F] [--timeout D] COMMAND
commands:
  nodes list                      adopted and unadopted nodes
  nodes unadopted                 unadopted nodes with their GPIO status, as JSON
  nodes enrol NODE --out DIR [--ca-sha256 HEX]
                                  before a node's first boot: write its bus key and the server's CA
                                  fingerprint to DIR (its state directory) and register the key
  nodes enrolled                  the enrolled nodes and the server's CA fingerprint, as JSON
  adopt NODE ROLE [--instance left|right] [--name NAME] [--bus-key KEY]
  reset NODE [--factory]
  info NODE                       everything the server knows of a node, as JSON
  call TYPE ACTION [JSON]         any WebSocket API request, e.g. call management firmware_status
                                  (robot control: call command/head move '{"pan":45}')
  balance CMD [ARGS...]           the balancing base's debug console: balance help, balance status
  firmware publish --image FILE --version V [--configs DIR] [--out DIR] [--sign-key FILE [--allow-downgrade]]
  firmware sign-downgrade --sign-key FILE --version V [--out DIR]
                                  the release key's permission for nodes that ran a newer version to
                                  go back to V: printed, and written into DIR's manifest
  firmware keygen [--out DIR] [--name NAME]   a new Ed25519 release key (NAME.key, NAME.pub)
  firmware pubkey --key FILE      the key's public half as saint-node's -ldflags take it
  firmware upload FILE --version V [--server http://HOST[:PORT]] [--token T] [--sign-key FILE] [--changelog TEXT]
  livelink replay FILE --to HOST:PORT [--speed X] [--loop] [--subject NAME]
                                  replay a Live Link Face capture at its recorded rate
  rc send --device PATH --protocol sbus|ibus|crsf --ch US,US,... [--rate HZ] [--count N]
                                  write RC receiver frames to a serial device
  jitter [--period 1ms] [--duration 10s] [--rt] [--load none|cpu|cpu+gc|goroutines|all]
                                  a periodic loop's period error on this machine
  record start [--max-mb N] [--max-minutes N] | stop | status
                                  record every topic on the server to MCAP files (its recordings/ dir)
  ros2 keystore create DIR        a DDS Security (SROS2) keystore: its CA and governance
  ros2 keystore enclave DIR NAME [--publish LIST] [--subscribe LIST] [--call LIST] [--serve LIST]
                                  an enclave (/saint_bridge for saint-ros2 --ros2-security, one per
                                  workstation) with permissions for those ROS names (default: all)
  mcap info FILE [--json]         topics, counts, rates and time range of a recording; a damaged
                                  file is summarised as far as it is readable`

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("saintctl", flag.ContinueOnError)
	server := fs.String("server", envOr("SAINT_SERVER", "ws://127.0.0.1:9090/saint"), "WebSocket API URL")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for an answer")
	token := fs.String("token", os.Getenv("SAINT_TOKEN"), "API token (default $SAINT_TOKEN)")
	tokenFile := fs.String("token-file", "", "read the API token from this file (the server's DATA/api_token)")
	fs.Usage = func() { fmt.Fprintln(fs.Output(), usage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return errors.New("no command")
	}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		*token = strings.TrimSpace(string(b))
	}
	if rest[0] == "firmware" {
		return firmwareCmd(rest[1:], out, *token)
	}
	if rest[0] == "livelink" {
		return livelinkCmd(rest[1:], out)
	}
	if rest[0] == "rc" {
		return rcCmd(rest[1:], out)
	}
	if rest[0] == "jitter" {
		return jitterCmd(rest[1:], out)
	}
	if rest[0] == "mcap" {
		return mcapCmd(rest[1:], out)
	}
	if rest[0] == "ros2" {
		return ros2Cmd(rest[1:], out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	c, err := dial(ctx, *server, *token)
	if err != nil {
		return err
	}
	defer c.Close()
	switch rest[0] {
	case "nodes":
		sub := "list"
		if len(rest) > 1 {
			sub = rest[1]
		}
		switch sub {
		case "list":
			return listNodes(ctx, c, out)
		case "unadopted":
			return printCall(ctx, c, out, "management", "list_unadopted", nil)
		case "enrol":
			return enrolNode(ctx, c, out, os.Stderr, rest[2:])
		case "enrolled":
			return printCall(ctx, c, out, "management", "list_enrolled_nodes", nil)
		}
		return fmt.Errorf("nodes %s: want list, unadopted, enrol or enrolled", sub)
	case "adopt":
		f := flag.NewFlagSet("adopt", flag.ContinueOnError)
		inst := f.String("instance", "", "left or right, for arms")
		name := f.String("name", "", "display name")
		busKey := f.String("bus-key", "", "the node's bus key as it logs it (\"bus key ... key=U...\"): the server refuses the adoption if the node connects with another")
		pos, err := parseInterleaved(f, rest[1:])
		if err != nil {
			return err
		}
		if len(pos) != 2 {
			return errors.New("usage: adopt NODE ROLE [--instance left|right] [--name NAME] [--bus-key KEY]")
		}
		params := map[string]any{"node_id": pos[0], "role": pos[1], "instance": *inst, "display_name": *name}
		if *busKey != "" {
			params["bus_key"] = *busKey
		}
		return printCall(ctx, c, out, "management", "adopt_node", params)
	case "reset":
		f := flag.NewFlagSet("reset", flag.ContinueOnError)
		factory := f.Bool("factory", false, "factory reset: also re-download firmware")
		pos, err := parseInterleaved(f, rest[1:])
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return errors.New("usage: reset NODE [--factory]")
		}
		return printCall(ctx, c, out, "management", "reset_node", map[string]any{"node_id": pos[0], "factory_reset": *factory})
	case "info":
		if len(rest) != 2 {
			return errors.New("usage: info NODE")
		}
		return printCall(ctx, c, out, "management", "get_node_info", map[string]any{"node_id": rest[1]})
	case "balance":
		return balanceCmd(ctx, c, out, rest[1:])
	case "record":
		return recordCmd(ctx, c, out, rest[1:])
	case "call":
		if len(rest) < 3 {
			return errors.New("usage: call TYPE ACTION [JSON-PARAMS]")
		}
		var params any
		if len(rest) > 3 {
			if err := json.Unmarshal([]byte(rest[3]), &params); err != nil {
				return fmt.Errorf("params: %w", err)
			}
		}
		return printCall(ctx, c, out, rest[1], rest[2], params)
	}
	return fmt.Errorf("unknown command %q\n%s", rest[0], usage)
}

// parseInterleaved parses flags that may come after positional arguments.
func parseInterleaved(f *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			return nil, err
		}
		args = f.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// client is saintctl's connection to the WebSocket API.
type client struct{ *wsclient.Client }

func dial(ctx context.Context, url, token string) (*client, error) {
	c, err := wsclient.DialOptions(ctx, url, token, wsclient.Options{Name: "saintctl"})
	var de *wsclient.DialError
	if errors.As(err, &de) && de.Status == http.StatusUnauthorized {
		return nil, fmt.Errorf("connecting to %s: wrong API token (--token, --token-file or $SAINT_TOKEN)", url)
	}
	if errors.As(err, &de) && de.Status == http.StatusTooManyRequests && de.RetryAfter != "" {
		// The server makes an address wait after wrong tokens (or has
		// too many connections from it).
		return nil, fmt.Errorf("connecting to %s: refused for now (too many wrong API tokens or connections from this address); retry in %s s", url, de.RetryAfter)
	}
	if err != nil {
		return nil, err
	}
	return &client{c}, nil
}

// call calls action; typ "command/head" is a robot-control command to the
// head.
func (c *client) call(ctx context.Context, typ, action string, params any) (json.RawMessage, error) {
	typ, target, _ := strings.Cut(typ, "/")
	return c.Call(ctx, typ, target, action, params)
}

func printCall(ctx context.Context, c *client, out io.Writer, typ, action string, params any) error {
	data, err := c.call(ctx, typ, action, params)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func listNodes(ctx context.Context, c *client, out io.Writer) error {
	var adopted struct {
		Nodes []struct {
			NodeID      string `json:"node_id"`
			Role        string `json:"role"`
			Instance    string `json:"instance"`
			DisplayName string `json:"display_name"`
			Online      bool   `json:"online"`
			LastStatus  *struct {
				State           string `json:"state"`
				FirmwareVersion string `json:"firmware_version"`
			} `json:"last_status"`
		} `json:"nodes"`
	}
	var unadopted struct {
		Nodes []struct {
			NodeID          string `json:"node_id"`
			HardwareRev     string `json:"hardware_rev"`
			FirmwareVersion string `json:"firmware_version"`
			Peripherals     []struct {
				Description string `json:"description"`
				Responsive  bool   `json:"responsive"`
			} `json:"peripherals"`
		} `json:"nodes"`
	}
	for _, q := range []struct {
		action string
		v      any
	}{{"list_adopted", &adopted}, {"list_unadopted", &unadopted}} {
		data, err := c.call(ctx, "management", q.action, nil)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, q.v); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tNAME\tSTATUS\tSTATE\tFIRMWARE")
	for _, n := range adopted.Nodes {
		role := n.Role
		if n.Instance != "" {
			role += "_" + n.Instance
		}
		status, state, fw := "offline", "", ""
		if n.Online {
			status = "online"
		}
		if n.LastStatus != nil {
			state, fw = n.LastStatus.State, n.LastStatus.FirmwareVersion
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n.NodeID, role, n.DisplayName, status, state, fw)
	}
	for _, n := range unadopted.Nodes {
		var ps []string
		for _, p := range n.Peripherals {
			if p.Responsive {
				ps = append(ps, p.Description)
			}
		}
		fmt.Fprintf(tw, "%s\t-\t%s\tonline\tUNADOPTED\t%s\n", n.NodeID, strings.Join(ps, ", "), n.FirmwareVersion)
	}
	return tw.Flush()
}

func firmwareCmd(args []string, out io.Writer, token string) error {
	if len(args) > 0 && args[0] == "upload" {
		return firmwareUpload(args[1:], token, out, os.Stderr)
	}
	if len(args) > 0 && (args[0] == "keygen" || args[0] == "pubkey") {
		return firmwareKeys(args, out)
	}
	if len(args) > 0 && args[0] == "sign-downgrade" {
		return signDowngrade(args[1:], out)
	}
	if len(args) == 0 || args[0] != "publish" {
		return errors.New("usage: firmware publish --image FILE --version V [--configs DIR] [--out DIR] [--sign-key FILE [--allow-downgrade]]\n" +
			"       firmware keygen [--out DIR] [--name NAME]\n       firmware pubkey --key FILE\n       " + signDowngradeUsage + "\n       " + uploadUsage)
	}
	f := flag.NewFlagSet("firmware publish", flag.ContinueOnError)
	image := f.String("image", "", "node binary to publish (required)")
	version := f.String("version", "", "firmware version, e.g. 1.2.0 (required)")
	configs := f.String("configs", "fixtures/config/roles", "role configurations to publish with it")
	dir := f.String("out", "firmware", "firmware directory to write")
	changelog := f.String("changelog", "", "changelog text")
	minHW := f.String("min-hardware-rev", "1.0", "oldest hardware revision the image runs on")
	date := f.String("date", time.Now().UTC().Format("2006-01-02"), "release date")
	arch := f.String("check-arch", "", "refuse an image that is not a static ELF executable for this GOARCH (arm64, amd64)")
	signKey := f.String("sign-key", "", "release private key (firmware keygen) to sign the image with; nodes built with its public key install only signed images")
	allowDowngrade := f.Bool("allow-downgrade", false, "with --sign-key: also sign a downgrade permission for this version, so that nodes that have installed a newer one take it when an update is forced")
	if err := f.Parse(args[1:]); err != nil {
		return err
	}
	if *image == "" || *version == "" {
		return errors.New("firmware publish: --image and --version are required")
	}
	if *allowDowngrade && *signKey == "" {
		return errors.New("firmware publish: --allow-downgrade needs --sign-key: the permission is signed with the release key")
	}
	data, err := os.ReadFile(*image)
	if err != nil {
		return err
	}
	if err := checkArch(data, *arch); err != nil {
		return fmt.Errorf("firmware publish: %s: %w", *image, err)
	}
	rel := firmware.Release{Version: *version, ReleaseDate: *date, MinHardwareRev: *minHW, Changelog: *changelog}
	if *signKey != "" {
		key, err := fwsign.ReadPrivateFile(*signKey)
		if err != nil {
			return fmt.Errorf("firmware publish: --sign-key: %w", err)
		}
		firmware.SignRelease(key, data, &rel)
		if *allowDowngrade {
			firmware.SignDowngrade(key, &rel)
		}
	}
	m, err := firmware.Publish(*dir, *configs, data, rel)
	if err != nil {
		return err
	}
	signed := "unsigned"
	if m.Firmware.Signature != "" {
		signed = "signed by " + m.Firmware.SigningKey
	}
	if m.Firmware.DowngradeSignature != "" {
		signed += ", downgrade permitted"
	}
	fmt.Fprintf(out, "published firmware %s (%d bytes, sha256 %s, %s) to %s\n", m.Firmware.Version, m.Firmware.SizeBytes, m.Firmware.ChecksumSHA256, signed, *dir)
	return nil
}

// firmwareKeys is firmware keygen (a new release key pair) and firmware
// pubkey (the compact public key of a key file, for -ldflags).
func firmwareKeys(args []string, out io.Writer) error {
	f := flag.NewFlagSet("firmware "+args[0], flag.ContinueOnError)
	dir := f.String("out", ".", "keygen: directory for NAME.key (private, 0600) and NAME.pub")
	name := f.String("name", "saint-release", "keygen: the key files' name")
	keyFile := f.String("key", "", "pubkey: a private (.key) or public (.pub) key file")
	if err := f.Parse(args[1:]); err != nil {
		return err
	}
	if args[0] == "pubkey" {
		if *keyFile == "" {
			return errors.New("firmware pubkey: --key FILE is required")
		}
		pub, err := fwsign.ReadPublicFile(*keyFile)
		if err != nil {
			priv, perr := fwsign.ReadPrivateFile(*keyFile)
			if perr != nil {
				return fmt.Errorf("firmware pubkey: %s is neither a public nor a private key: %v", *keyFile, err)
			}
			pub = priv.Public().(ed25519.PublicKey)
		}
		fmt.Fprintln(out, fwsign.EncodePublic(pub))
		return nil
	}
	pub, err := fwsign.WriteKeyPair(*dir, *name)
	if err != nil {
		return fmt.Errorf("firmware keygen: %w", err)
	}
	fmt.Fprintf(out, "wrote %s (keep it secret, offline) and %s\npublic key: %s\n",
		filepath.Join(*dir, *name+".key"), filepath.Join(*dir, *name+".pub"), fwsign.EncodePublic(pub))
	fmt.Fprintf(out, "build nodes that trust it: make firmware SIGN_KEY=%s\n", filepath.Join(*dir, *name+".key"))
	return nil
}
