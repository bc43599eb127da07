package webui

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/clock"
	wire "github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/inputs/rc"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// TestInputsLive runs the Inputs page against a server whose RC receiver
// reads a simulated transmitter (IBUS on a simulated UART) and whose
// LiveLink receiver listens on free ports: the channel bars follow the
// sticks, calibration stores where the stick is, and a LiveLink subject's
// bars show the values streamed to it.
func TestInputsLive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium")
	}
	t.Parallel()
	ctx := browser(t)

	configDir := t.TempDir()
	yaml := `rc_receiver:
  protocol: ibus
  uart: {device: /dev/sim-rc, baud_rate: 0, inverted: false}
  failsafe: {timeout_ms: 400, action: hold}
  channels:
    - {number: 1, name: steering, min: 1000, max: 2000, center: 1500}
    - {number: 2, name: throttle, min: 1000, max: 2000, center: 1500}
`
	if err := os.WriteFile(filepath.Join(configDir, rc.FileName), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	b := mem.New()
	t.Cleanup(func() { _ = b.Close() })
	// The server's own executor runs on the wall clock, as the line does.
	device, host := uarttest.Pipe(clock.Real{})
	srv, err := server.New(server.Options{Bus: b, RCPorts: rc.FixedPort(host), ConfigDir: configDir, DataDir: t.TempDir(), NoAuth: true,
		HTTPAddr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		LiveLink: server.LiveLinkOptions{FaceAddr: "127.0.0.1:0", DataAddr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	var tx *rctx.Serial
	t.Cleanup(func() {
		if tx != nil {
			tx.Close()
		}
		srv.Shutdown()
	})
	if err := srv.Exec().Do(t.Context(), func() { tx, err = rctx.NewSerial(srv.Exec(), device, wire.IBUS, nil) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.SetAll(1750, 1250); err != nil {
		t.Fatal(err)
	}
	stop := streamFrames(t, srv.LiveLinkAddrs().Data)
	defer stop()

	p := newPage(t, ctx)
	p.open("http://"+srv.Addrs()["http"]+"/#/inputs", "#rc-connected")
	p.until("channel bars follow the sticks", `(() => { const v = (n) => (document.querySelector('#rc-channels [aria-label^="CH' + n + ' "]') || {}).getAttribute?.('aria-valuenow');
		return document.querySelector('#rc-connected').textContent.includes('Connected') && v(1) === '0.5' && v(2) === '-0.5'; })()`)
	if err := tx.SetAll(1600); err != nil {
		t.Fatal(err)
	}
	p.until("bar follows the stick", `(document.querySelector('#rc-channels [aria-label^="CH1 "]') || {}).getAttribute?.('aria-valuenow') === '0.2'`)
	// The stick at 1600 µs becomes channel 1's centre.
	p.click(`#rc-channel-form [data-calibrate=center]`)
	p.until("centre calibrated", `document.querySelector('#rc-channel-form [data-field=center]').value === '1600'`)
	if got := p.eval(`String(document.querySelector('#rc-channel-form .form-error').textContent)`); got != "" {
		t.Errorf("calibration error %q", got)
	}
	if got := p.eval(`document.querySelector('#rc-timeout').value + ' ' + document.querySelector('#rc-failsafe').value`); got != "400 hold" {
		t.Errorf("failsafe form shows %q, want the configured \"400 hold\"", got)
	}
	p.click(`#livelink-sources tr[data-subject="UITest"] button`)
	p.until("live property bars", `(() => { const v = (n) => (document.querySelector('#livelink-values [data-property="' + n + '"] .bar-value') || {}).textContent;
		return v('jawOpen') === '0.25' && v('headYaw') === '-0.50'; })()`)
	p.shot("inputs-live")
}
