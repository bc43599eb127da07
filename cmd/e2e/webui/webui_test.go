package webui

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/foxglove/mcap/go/mcap"
	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/kinematics"
)

// stepTimeout bounds one wait in the browser; it is generous for a loaded
// 2-core machine, and nothing waits for it unless something is wrong.
const stepTimeout = 30 * time.Second

// sim is a running saint-sim process.
type sim struct {
	http, ws string
	dataDir  string
}

// buildSim builds saint-sim once for the package's tests.
var buildSim = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "saint-webui-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "saint-sim")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/saint-os/saint/cmd/saint-sim").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building saint-sim: %v\n%s", err, out)
	}
	return bin, nil
})

func startSim(t *testing.T, args ...string) *sim {
	t.Helper()
	bin, err := buildSim()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addrs.json")
	s := &sim{dataDir: filepath.Join(dir, "data")}
	cmd := exec.Command(bin, append([]string{"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0",
		"--data", s.dataDir, "--addr-file", addrFile}, args...)...)
	logf, err := os.Create(filepath.Join(dir, "sim.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("saint-sim log (tail):\n%s", b)
		}
	})
	var addrs map[string]string
	bustest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(addrFile)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &addrs)
	})
	s.http, s.ws = addrs["http"], addrs["ws"]
	return s
}

func (s *sim) url(hash string) string { return "http://" + s.http + "/#" + hash }

// apiClient is a program's WebSocket connection to the API, for setting up
// and checking what the browser did.
type apiClient struct {
	mu   sync.Mutex
	conn *websocket.Conn
	seq  int
}

func dialAPI(t *testing.T, s *sim, token string) *apiClient {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws://"+s.ws+"/saint", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &apiClient{conn: conn}
	if token != "" {
		if _, err := c.send(map[string]any{"type": "auth", "token": token}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// send sends one request and returns its data, skipping state updates.
func (c *apiClient) send(req map[string]any) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	id := fmt.Sprint(c.seq)
	req["id"] = id
	_ = c.conn.SetWriteDeadline(time.Now().Add(stepTimeout))
	if err := c.conn.WriteJSON(req); err != nil {
		return nil, err
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(stepTimeout))
	for {
		var r struct {
			ID      any             `json:"id"`
			Type    string          `json:"type"`
			Status  string          `json:"status"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := c.conn.ReadJSON(&r); err != nil {
			return nil, err
		}
		if r.Type != "response" || fmt.Sprint(r.ID) != id {
			continue
		}
		if r.Status != "ok" {
			return nil, fmt.Errorf("%v %v: %s", req["type"], req["action"], r.Message)
		}
		return r.Data, nil
	}
}

func (c *apiClient) call(typ, action string, params map[string]any, out any) error {
	data, err := c.send(map[string]any{"type": typ, "action": action, "params": params})
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(data, out)
}

type nodeList struct {
	Nodes []struct {
		NodeID   string `json:"node_id"`
		Role     string `json:"role"`
		Instance string `json:"instance"`
		Name     string `json:"display_name"`
	} `json:"nodes"`
}

func (l nodeList) has(id string) bool {
	for _, n := range l.Nodes {
		if n.NodeID == id {
			return true
		}
	}
	return false
}

// adopt waits for the nodes to announce themselves and adopts them.
func adopt(t *testing.T, c *apiClient, nodes map[string]string) {
	t.Helper()
	bustest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		var u nodeList
		if err := c.call("management", "list_unadopted", nil, &u); err != nil {
			return err
		}
		for id := range nodes {
			if !u.has(id) {
				return fmt.Errorf("%s has not announced itself", id)
			}
		}
		return nil
	})
	for id, role := range nodes {
		if err := c.call("management", "adopt_node", map[string]any{"node_id": id, "role": role, "display_name": role}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// streamLiveLink moves the sim's LiveLink data port to a free one, so no
// other server on the machine takes the frames, and sends a face subject
// there ten times a second until stopped.
func streamLiveLink(t *testing.T, api *apiClient) (stop func()) {
	t.Helper()
	free := func(network string) int {
		if network == "udp" {
			c, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			return c.LocalAddr().(*net.UDPAddr).Port
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	dataPort := free("tcp")
	if err := api.call("management", "set_settings", map[string]any{"livelink": map[string]any{
		"enabled": true, "data_port": dataPort, "discovery_port": free("udp")}}, nil); err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(dataPort))
	type status struct {
		Enabled bool   `json:"enabled"`
		DataTCP string `json:"data_tcp"`
	}
	var st status
	if err := api.call("livelink", "get_status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if !st.Enabled && st.DataTCP == "" {
		t.Skip("this saint-sim runs no LiveLink receiver (livelink get_status: not enabled, no data port)")
	}
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if err := api.call("livelink", "get_status", nil, &st); err != nil {
			return err
		}
		if !strings.HasSuffix(st.DataTCP, fmt.Sprintf(":%d", dataPort)) {
			return fmt.Errorf("LiveLink data port is %q, want :%d", st.DataTCP, dataPort)
		}
		return nil
	})
	return streamFrames(t, addr)
}

// streamFrames sends the face subject UITest (jawOpen 0.25, headYaw -0.5)
// as SAINT LiveLink JSON to addr ten times a second until stopped.
func streamFrames(t *testing.T, addr string) (stop func()) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for frame := 1; ; frame++ {
			line := fmt.Sprintf(`{"v":1,"subject":"UITest","type":"face","frame":%d,"names":["jawOpen","headYaw"],"values":[0.25,-0.5]}`+"\n", frame)
			_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := conn.Write([]byte(line)); err != nil {
				return
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(quit); <-done; conn.Close() }
}

// chromium finds Debian's Chromium, installing it as root when missing.
func chromium(t *testing.T) string {
	t.Helper()
	find := func() string {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	if os.Geteuid() != 0 {
		t.Skip("Chromium is not installed and the test is not root, so it cannot install it: apt-get install chromium")
	}
	t.Log("installing Chromium with apt-get")
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "chromium"}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("Chromium is missing and apt-get %s failed: %v\n%s", args[0], err, out)
		}
	}
	if p := find(); p != "" {
		return p
	}
	t.Skip("apt-get installed no chromium binary")
	return ""
}

// browser starts a headless Chromium for the test and returns a tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...),
		chromedp.ExecPath(chromium(t)), chromedp.WindowSize(1280, 900), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// page wraps a browser tab with steps that fail the test with the page's
// state when a wait runs out.
type page struct {
	t   *testing.T
	ctx context.Context
	dir string
}

func newPage(t *testing.T, ctx context.Context) *page {
	dir := os.Getenv("SAINT_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	return &page{t: t, ctx: ctx, dir: dir}
}

func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v\n%s", what, err, p.dump())
	}
}

// dump is the visible text of the page, for a failure message.
func (p *page) dump() string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
	if err != nil {
		return "(page text unavailable: " + err.Error() + ")"
	}
	if len(s) > 3000 {
		s = s[:3000]
	}
	return s
}

// until waits for a JavaScript expression to be true.
func (p *page) until(what, expr string) {
	p.t.Helper()
	p.do(what, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(stepTimeout))(ctx, t)
		return err
	}))
}

func (p *page) eval(expr string, opts ...chromedp.EvaluateOption) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, opts...))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return s
}

// open shows a page of the UI and waits for the element that says it has
// loaded.
func (p *page) open(url, ready string) {
	p.t.Helper()
	p.do("open "+url, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(ready)))
}

// shot saves the whole page as NAME.png, without the notices of earlier
// steps that would cover it.
func (p *page) shot(name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('toasts').replaceChildren()`)); err != nil {
		p.t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// setValue sets a form control's value and fires the events a person's
// typing would.
func (p *page) setValue(sel, value string) {
	p.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q;
		e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, sel, value)
	p.do("set "+sel, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](js)(ctx, t)
		return err
	}))
}

func (p *page) click(sel string) {
	p.t.Helper()
	p.do("click "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

func TestWebUI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs saint-sim and Chromium")
	}
	t.Parallel()
	ctx := browser(t)
	s := startSim(t)
	api := dialAPI(t, s, "")
	// The head and tracks are adopted by the program; the arms are left
	// for the adopt page.
	adopt(t, api, map[string]string{"sim-tracks": "tracks", "sim-head": "head"})
	p := newPage(t, ctx)

	t.Run("dashboard", func(t *testing.T) {
		p.t = t
		p.open(s.url("/"), "#system-status dd")
		p.until("node summary", `document.querySelector('#node-summary [data-node="sim-tracks"]') !== null`)
		p.until("activity log", `document.querySelectorAll('#activity-log li').length > 0`)
		if d := p.eval(`getComputedStyle(document.querySelector('#estop-banner')).display`); d != "none" {
			t.Fatalf("the e-stop banner shows (display %s) before any stop", d)
		}
		p.shot("dashboard")

		// The first Tab reaches the skip link, and Enter on it moves the
		// focus to the page's content without leaving the page.
		p.do("Tab", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`)(ctx, t)
			return err
		}), chromedp.KeyEvent("\t"))
		if got := p.eval(`document.activeElement.className + ' ' + document.activeElement.textContent`); got != "skip Skip to content" {
			t.Fatalf("the first Tab focuses %q, want the skip link", got)
		}
		p.do("Enter", chromedp.KeyEvent("\r"))
		p.until("focus on the content", `document.activeElement.id === 'view' && location.hash === '#/'`)
	})

	t.Run("recording", func(t *testing.T) {
		p.t = t
		p.open(s.url("/"), "#system-status dd")
		p.until("recording status", `document.querySelector('#recording').dataset.recording === 'false'`)
		p.click("#record-toggle")
		p.until("a recording with messages", `document.querySelector('#recording').dataset.recording === 'true' &&
			Number(document.querySelector('#recording').dataset.messages) > 0`)
		p.shot("dashboard-recording")
		p.click("#record-toggle")
		p.until("the recording stopped and listed", `document.querySelector('#recording').dataset.recording === 'false' &&
			document.querySelectorAll('#recording-files li').length === 1`)
		// What the page listed is a complete file in the server's
		// recordings directory.
		var st struct {
			Recording bool     `json:"recording"`
			Files     []string `json:"files"`
			Messages  uint64   `json:"messages"`
		}
		if err := api.call("management", "record_status", nil, &st); err != nil {
			t.Fatal(err)
		}
		listed := p.eval(`document.querySelector('#recording-files li').textContent`)
		if st.Recording || len(st.Files) != 1 || filepath.Base(st.Files[0]) != listed || st.Messages == 0 {
			t.Fatalf("record_status %+v after the page stopped a recording listed as %q", st, listed)
		}
		f, err := os.Open(st.Files[0])
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		info, err := mcap.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		summary, err := info.Info()
		if err != nil {
			t.Fatalf("the recording the page made: %v", err)
		}
		if summary.Statistics == nil || summary.Statistics.MessageCount != st.Messages {
			t.Errorf("the file's statistics %+v, the server counted %d messages", summary.Statistics, st.Messages)
		}
	})

	t.Run("adopt", func(t *testing.T) {
		p.t = t
		p.open(s.url("/nodes"), `#unadopted tr[data-node="sim-arms-left"]`)
		p.shot("nodes")
		p.click(`#unadopted tr[data-node="sim-arms-left"] a`)
		p.do("adopt page", chromedp.WaitVisible(chromedp.CSS("#adopt-form")), chromedp.WaitVisible(chromedp.CSS("#gpio-header .pin.used")))
		// Every pin shows its level, the free ones too: on the simulated
		// arms board GPIO17 floats low, GPIO4 has the SoC's power-on
		// pull-up (GPIO0–8), the reset button's pull-up holds GPIO21 high.
		for pin, want := range map[int]string{
			11: "Pin 11 GPIO17: input, low",
			7:  "Pin 7 GPIO4: input, high",
			40: "Pin 40 GPIO21: input, high → reset_button",
		} {
			q := fmt.Sprintf(`document.querySelector('#gpio-header .pin[data-pin="%d"]').getAttribute('aria-label')`, pin)
			if got := p.eval(q); got != want {
				t.Errorf("header pin %d reads %q, want %q", pin, got, want)
			}
		}
		high := strings.Split(p.eval(`[...document.querySelectorAll('#gpio-header .pin.high')].map((e) => e.dataset.pin).join(',')`), ",")
		if !slices.Contains(high, "7") || !slices.Contains(high, "40") || slices.Contains(high, "11") {
			t.Errorf("pins marked high: %q, want 7 and 40 among them and not 11", high)
		}
		// By keyboard: space picks the role, Enter in the name submits.
		p.do("choose Arms Left", chromedp.Focus(chromedp.CSS("#role-arms-left")), chromedp.KeyEvent(" "))
		if got := p.eval(`document.querySelector('#adopt-submit').textContent`); got != "Adopt as Arms Left" {
			t.Fatalf("submit button says %q after choosing Arms Left", got)
		}
		p.setValue("#adopt-name", "")
		p.do("type the name", chromedp.SendKeys(chromedp.CSS("#adopt-name"), "Port Arm"))
		p.shot("adopt")
		p.do("submit with Enter", chromedp.KeyEvent("\r"))
		p.until("moved to the adopted table", `location.hash === '#/nodes' &&
			document.querySelector('#adopted tr[data-node="sim-arms-left"]') !== null &&
			document.querySelector('#unadopted tr[data-node="sim-arms-left"]') === null`)
		var a nodeList
		if err := api.call("management", "list_adopted", nil, &a); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, n := range a.Nodes {
			if n.NodeID == "sim-arms-left" {
				found = true
				if n.Role != "arms" || n.Instance != "left" || n.Name != "Port Arm" {
					t.Errorf("server adopted sim-arms-left as %s/%s %q, want arms/left \"Port Arm\"", n.Role, n.Instance, n.Name)
				}
			}
		}
		if !found {
			t.Fatal("list_adopted lacks sim-arms-left after the adopt page said it was adopted")
		}

		// The tables refresh themselves; a keyboard user's focus stays on
		// the control it was on.
		p.do("focus View of sim-head", chromedp.Focus(chromedp.CSS(`#adopted tr[data-node="sim-head"] a`)))
		p.do("mark the table", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[chromedp.Void](`window.tableBefore = document.querySelector('#adopted table')`)(ctx, t)
			return err
		}))
		p.until("table refreshed", `document.querySelector('#adopted table') !== window.tableBefore`)
		if got := p.eval(`(document.activeElement.closest('tr') || {dataset: {}}).dataset.node + ' ' + document.activeElement.textContent`); got != "sim-head View" {
			t.Errorf("after the table refreshed the focus is on %q, want sim-head's View", got)
		}
	})

	t.Run("node details", func(t *testing.T) {
		p.t = t
		// The page's plain address (/nodes/ID, no hash) leads to it too.
		p.open("http://"+s.http+"/nodes/sim-head", "#role-state")
		if got := p.eval(`location.hash`); got != "#/nodes/sim-head" {
			t.Fatalf("/nodes/sim-head led to %q", got)
		}
		p.until("head state", `document.querySelector('#role-state [data-key="Pan"]') !== null`)
		// The simulator's rendered camera view, through the server's
		// "camera" topic.
		p.click("#camera-toggle")
		p.until("camera frames", `(() => { const i = document.querySelector('#camera-view');
			return i.complete && i.naturalWidth === 640 && i.naturalHeight === 480; })()`)
		if got := p.eval(`(() => { const i = document.querySelector('#camera-view'); const c = document.createElement('canvas');
			c.width = i.naturalWidth; c.height = i.naturalHeight; const g = c.getContext('2d'); g.drawImage(i, 0, 0);
			const d = g.getImageData(0, 0, c.width, c.height).data; const seen = new Set();
			for (let k = 0; k < d.length; k += 4 * 97) seen.add((d[k] >> 5) + ',' + (d[k+1] >> 5) + ',' + (d[k+2] >> 5));
			return seen.size > 4 ? 'picture' : 'flat ' + seen.size; })()`); got != "picture" {
			t.Errorf("the camera view is %s, want the rendered scene", got)
		}
		p.shot("node-details")
		p.click("#camera-toggle")
	})

	t.Run("route preview", func(t *testing.T) {
		p.t = t
		// A controller that keeps moving the head: the WebSocket source's
		// latest pan is what the preview maps.
		mover := dialAPI(t, s, "")
		var pan atomic.Int64
		pan.Store(20)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					_, _ = mover.send(map[string]any{"type": "command", "target": "head", "action": "move",
						"params": map[string]any{"pan": float64(pan.Load())}})
				}
			}
		}()
		defer func() { close(stop); <-done }()

		p.open(s.url("/routes/edit/new"), "#route-form")
		p.setValue("#route-id", "ui_pan_double")
		p.setValue("#route-priority", "120")
		p.setValue(".mapping [data-key=to]", "tilt")
		p.until("preview of scale 1", `document.querySelector('.preview-out') && document.querySelector('.preview-out').textContent === '20.000'`)
		p.setValue(".mapping [data-key=scale]", "2")
		p.until("preview follows the scale", `document.querySelector('.preview-out').textContent === '40.000'`)
		pan.Store(30)
		p.until("preview follows the input", `document.querySelector('.preview-in').textContent === '30.000' &&
			document.querySelector('.preview-out').textContent === '60.000'`)
		p.shot("route-edit")
		p.click("#save-route")
		p.until("saved route listed", `location.hash === '#/routes' && document.querySelector('#routes-table tr[data-route="ui_pan_double"]') !== null`)
		var r struct {
			Routes []struct {
				ID       string `json:"id"`
				Priority int    `json:"priority"`
				Input    struct {
					Source string `json:"source"`
				} `json:"input"`
				Mapping json.RawMessage `json:"mapping"`
			} `json:"routes"`
		}
		if err := api.call("router", "list_routes", nil, &r); err != nil {
			t.Fatal(err)
		}
		var saved string
		for _, rt := range r.Routes {
			if rt.ID == "ui_pan_double" {
				saved = fmt.Sprintf("%s %d %s", rt.Input.Source, rt.Priority, rt.Mapping)
			}
		}
		if want := `websocket 120 [{"from":"pan","to":"tilt","scale":2}]`; saved != want {
			t.Fatalf("saved route: %q, want %q", saved, want)
		}
		p.until("route flow", `document.querySelector('#route-flow') !== null`)
		p.shot("routes")
	})

	t.Run("balance drive", func(t *testing.T) {
		p.t = t
		adopt(t, api, map[string]string{"sim-balance": "balance"})
		// The base's speed cap, raised on its console as a pilot does.
		for _, line := range []string{"speed_limit 20", "speed_limit 30"} {
			if _, err := api.send(map[string]any{"type": "command", "target": "balance", "action": "console", "params": map[string]any{"line": line}}); err != nil {
				t.Fatal(err)
			}
		}
		p.open(s.url("/nodes/sim-balance"), "#drive-forward")
		p.until("balance state", `(document.querySelector('#role-state [data-key="Balance"]') || {}).textContent === 'disarmed'`)
		p.click("#balance-arm")
		p.until("armed", `(document.querySelector('#role-state [data-key="Balance"]') || {}).textContent === 'armed'`)
		p.setValue("#drive-speed", "0.5")
		p.do("hold Forward", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[chromedp.Void](`document.querySelector('#drive-forward').dispatchEvent(new PointerEvent('pointerdown', {bubbles: true}))`)(ctx, t)
			return err
		}))
		p.until("driven from the page", `(document.querySelector('#role-state [data-key="Source"]') || {}).textContent === 'bus' &&
			parseFloat((document.querySelector('#role-state [data-key="Speed"]') || {textContent: '0'}).textContent) > 0.3`)
		p.shot("node-balance-drive")
		p.do("let go", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[chromedp.Void](`document.querySelector('#drive-forward').dispatchEvent(new PointerEvent('pointerup', {bubbles: true}))`)(ctx, t)
			return err
		}))
		p.until("stopped", `document.querySelector('#drive-status').textContent === 'Stopped' &&
			Math.abs(parseFloat(document.querySelector('#role-state [data-key="Speed"]').textContent)) < 0.1`)
		p.click("#balance-disarm")
		p.until("disarmed", `(document.querySelector('#role-state [data-key="Balance"]') || {}).textContent === 'disarmed'`)
	})

	t.Run("motor sessions", func(t *testing.T) {
		p.t = t
		// A WebSocket client takes the head's motors, once the root
		// middleware knows them (it polls the head's every second).
		var got struct {
			Success bool   `json:"success"`
			UUID    string `json:"uuid"`
			Message string `json:"message"`
		}
		bustest.CheckFor(t, stepTimeout, 200*time.Millisecond, func() error {
			raw, err := api.send(map[string]any{"type": "command", "target": "motors", "action": "request_control",
				"params": map[string]any{"client": "ws-pilot", "motor_ids": []int{31}, "timeout_ms": 60000}})
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &got); err != nil || !got.Success {
				return fmt.Errorf("request_control: %s", raw)
			}
			return nil
		})
		p.open(s.url("/"), "#motor-sessions table")
		p.until("the head held by the client", `(document.querySelector('#motor-sessions tr[data-group="head"] [data-held-by]') || {}).textContent === 'ws-pilot'`)
		// The router drives the tracks for another client: it holds them.
		stop := make(chan struct{})
		driving := make(chan struct{})
		go func() {
			defer close(driving)
			for {
				_, _ = api.send(map[string]any{"type": "command", "target": "tracks", "action": "drive", "params": map[string]any{"linear": 0.1}})
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		p.until("the tracks held by the router", `(() => { const r = document.querySelector('#motor-sessions tr[data-group="tracks"]');
			return r !== null && (r.querySelector('[data-held-by]') || {}).textContent === 'router (tracks)' && r.textContent.includes('role commands'); })()`)
		p.shot("dashboard-motor-sessions")
		close(stop)
		<-driving
		if _, err := api.send(map[string]any{"type": "command", "target": "tracks", "action": "drive", "params": map[string]any{"linear": 0}}); err != nil {
			t.Fatal(err)
		}
		// The client lets go: the head is free.
		if _, err := api.send(map[string]any{"type": "command", "target": "motors", "action": "release_control", "params": map[string]any{"uuid": got.UUID}}); err != nil {
			t.Fatal(err)
		}
		p.until("the head free", `(() => { const r = document.querySelector('#motor-sessions tr[data-group="head"]');
			return r !== null && r.querySelector('[data-held-by]') === null && r.textContent.includes('free'); })()`)
	})

	t.Run("estop", func(t *testing.T) {
		p.t = t
		p.open(s.url("/"), "#estop-all")
		p.click("#estop-all")
		p.until("dashboard shows the stop", `getComputedStyle(document.querySelector('#estop-banner')).display !== 'none' &&
			document.querySelector('#estop-state').textContent === 'ACTIVE'`)
		// The dashboard's log, at warnings and above, shows the stop.
		p.setValue("#dash-log-level", "WARN")
		p.until("warnings only, the stop among them", `(() => { const lines = [...document.querySelectorAll('#activity-log li')];
			return lines.length > 0 && lines.every((l) => /lvl-(WARN|ERROR)/.test(l.className)) &&
				lines.some((l) => l.textContent.includes('emergency stop engaged')); })()`)
		// The tracks node's own warning comes back as its alert.
		p.until("the node's alert on the dashboard", `(document.querySelector('#node-summary [data-alerts="sim-tracks"]') || {textContent: ''}).textContent.includes('emergency stop engaged')`)
		p.shot("dashboard-estop")
		p.open(s.url("/nodes/sim-tracks"), "#role-state")
		p.until("the tracks report the stop", `(document.querySelector('#role-state [data-key="E-Stop"]') || {}).textContent === 'ACTIVE: motors stopped'`)
		p.until("the node page lists the alert", `(document.querySelector('#node-alerts [data-source="tracks"]') || {textContent: ''}).textContent.includes('emergency stop engaged')`)
		p.shot("node-tracks-estop")
		p.open(s.url("/"), "#estop-release")
		p.click("#estop-release")
		p.until("released", `getComputedStyle(document.querySelector('#estop-banner')).display === 'none'`)
		p.open(s.url("/nodes/sim-tracks"), "#role-state")
		p.until("the tracks report the release", `(document.querySelector('#role-state [data-key="E-Stop"]') || {}).textContent === 'released'`)
	})

	t.Run("logs", func(t *testing.T) {
		p.t = t
		p.open(s.url("/logs"), "#log-table tbody tr[data-seq]")
		p.shot("logs")
		p.setValue("#log-source", "adoption")
		p.until("only adoption events", `(() => { const rows = [...document.querySelectorAll('#log-table tbody tr[data-seq]')];
			return rows.length > 0 && rows.every((r) => r.children[2].textContent === 'adoption'); })()`)
		p.setValue("#log-search", "sim-arms-left")
		p.until("only sim-arms-left adoption events", `(() => { const rows = [...document.querySelectorAll('#log-table tbody tr[data-seq]')];
			return rows.length > 0 && rows.every((r) => r.children[2].textContent === 'adoption' && r.children[4].textContent.toLowerCase().includes('sim-arms-left')); })()`)
		var r struct {
			Total int `json:"total"`
		}
		if err := api.call("management", "get_activity_log", map[string]any{"source": "adoption", "search": "sim-arms-left"}, &r); err != nil {
			t.Fatal(err)
		}
		rows := p.eval(`String(document.querySelectorAll('#log-table tbody tr[data-seq]').length)`)
		if want := fmt.Sprint(min(r.Total, 50)); rows != want || r.Total == 0 {
			t.Errorf("the filtered page shows %s events, the API has %d", rows, r.Total)
		}
		if page := p.eval(`document.querySelector('#log-page').textContent`); !strings.HasSuffix(page, fmt.Sprintf("%d events", r.Total)) {
			t.Errorf("pager says %q, the API counts %d events", page, r.Total)
		}
		p.shot("logs-filtered")
	})

	t.Run("inputs", func(t *testing.T) {
		p.t = t
		p.open(s.url("/inputs"), "#ws-clients table")
		p.until("clients with a rate", `(() => { const rows = [...document.querySelectorAll('#ws-clients tbody tr[data-client]')];
			return rows.length >= 2 && rows.every((r) => /^\d+\.\d$/.test(r.children[3].textContent)); })()`)
		p.until("rc status", `document.querySelector('#rc-connected') !== null`)
		p.shot("inputs")
		// Calibrating stores the stick's raw value as the centre, or, with
		// no transmitter on the simulated receiver, says why it cannot.
		p.click(`#rc-channel-form [data-calibrate=center]`)
		p.until("calibration answered", `document.querySelector('#rc-channel-form .form-error').textContent.length > 0 ||
			[...document.querySelectorAll('#toasts .toast')].some((t) => /^Channel 1 center = \d+$/.test(t.textContent))`)
		if msg := p.eval(`document.querySelector('#rc-channel-form .form-error').textContent`); msg == "" {
			raw := p.eval(`[...document.querySelectorAll('#toasts .toast')].map((t) => t.textContent).find((t) => t.startsWith('Channel 1 center = ')).slice(19)`)
			if got := p.eval(`document.querySelector('#rc-channel-form [data-field=center]').value`); got != raw {
				t.Errorf("calibrated centre %s, but the form shows %s", raw, got)
			}
		}
	})

	t.Run("livelink", func(t *testing.T) {
		p.t = t
		stop := streamLiveLink(t, api)
		defer stop()
		p.open(s.url("/inputs"), `#livelink-sources tr[data-subject="UITest"] button`)
		p.click(`#livelink-sources tr[data-subject="UITest"] button`)
		p.until("live property bars", `(() => { const v = (n) => (document.querySelector('#livelink-values [data-property="' + n + '"] .bar-value') || {}).textContent;
			return v('jawOpen') === '0.25' && v('headYaw') === '-0.50'; })()`)
		p.shot("inputs-livelink")
	})

	t.Run("settings", func(t *testing.T) {
		p.t = t
		p.open(s.url("/settings"), "#settings-form")
		p.until("firmware status", `document.querySelector('#fw-current') !== null`)
		p.shot("settings")
		p.setValue("#set-livelink-data_port", "99999")
		p.click("#save-settings")
		p.until("error beside the data port", `(() => { const e = document.querySelector('#set-livelink-data_port');
			return e.getAttribute('aria-invalid') === 'true' && e.parentElement.querySelector('.field-error').textContent.includes('livelink.data_port'); })()`)
		p.shot("settings-error")

		// A file that is no firmware: the browser hashes it, the upload
		// runs to the end, and the server's refusal names the image.
		junk := filepath.Join(t.TempDir(), "not-firmware.img")
		if err := os.WriteFile(junk, []byte(strings.Repeat("not an executable\n", 4096)), 0o644); err != nil {
			t.Fatal(err)
		}
		p.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#fw-file"), []string{junk}))
		p.until("sha256 computed", `document.querySelector('#fw-sha256').value.length === 64`)
		p.setValue("#fw-version", "9.9.9")
		p.click("#fw-form button[type=submit]")
		p.until("refusal beside the image", `(() => { const e = document.querySelector('#fw-file');
			return e.getAttribute('aria-invalid') === 'true' && e.parentElement.querySelector('.field-error').textContent.includes('not an ELF executable'); })()`)
		if v := p.eval(`String(document.querySelector('#fw-progress').value)`); v != "1" {
			t.Errorf("upload progress ends at %s, want 1", v)
		}
		p.shot("settings-firmware-refused")
	})

	// The reference robot has no humanoid limbs: the robot page says so
	// instead of waiting for them.
	t.Run("robot page draws the reference robot", func(t *testing.T) {
		p.t = t
		p.open(s.url("/robot"), "#robot-canvas")
		p.until("the left arm and the head drawn", `(() => { const v = window.saintRobotView;
			return !!v && ['front', 'side'].every((n) => v.drawn[n] && v.drawn[n].arm_left && v.drawn[n].neck); })()`)
		// The arm moved: the page draws its gripper where the arms'
		// kinematics put it at the commanded angles (within the servos'
		// deadband: 2 cm at full reach).
		deg := []float64{30, -40, 60, 20, 0}
		if _, err := api.send(map[string]any{"type": "command", "target": "arms", "action": "move",
			"params": map[string]any{"arm": "left", "positions": deg, "speed": 1}}); err != nil {
			t.Fatal(err)
		}
		q := make([]float64, len(deg))
		for i, d := range deg {
			q[i] = d * math.Pi / 180
		}
		want := kinematics.DefaultArm("left").Chain(q)[kinematics.NumJoints]
		bustest.CheckFor(t, 20*time.Second, 200*time.Millisecond, func() error {
			pts := p.robotView().Limbs["arm_left"].Points
			if len(pts) != kinematics.NumJoints+1 {
				return fmt.Errorf("the left arm has %d points", len(pts))
			}
			got := pts[kinematics.NumJoints]
			if d := math.Hypot(math.Hypot(got[0]-want[0], got[1]-want[1]), got[2]-want[2]); d > 0.02 {
				return fmt.Errorf("the page's left gripper at %v, the kinematics put it at %v: %.3f m apart", got, want, d)
			}
			return nil
		})
		v := p.robotView()
		front := v.Drawn["front"]["arm_left"]
		x, y := mid(front[2], front[3])
		if got := p.pixel(x, y); got != leftColour {
			t.Errorf("the canvas at (%d, %d), the left upper arm, is %v, want %v", x, y, got, leftColour)
		}

		// The head panned 60° to its left: from the front the face's dot
		// is on the viewer's right of the head's centre, and not on the
		// left.
		if _, err := api.send(map[string]any{"type": "command", "target": "head", "action": "move",
			"params": map[string]any{"pan": 60, "tilt": 0, "speed": 1}}); err != nil {
			t.Fatal(err)
		}
		p.until("the head drawn facing left", `(() => { const f = window.saintRobotView.limbs.neck.facing; return f && f[1] > 0.8; })()`)
		neck := p.robotView().Drawn["front"]["neck"]
		cx, cy := mid(neck[1], neck[2])
		r := float64(neck[1][1]-neck[2][1]) / 2
		off := int(math.Round(0.85 * r))
		faceColour, headFill := [3]int{0x5b, 0x64, 0x75}, [3]int{0xee, 0xf1, 0xf6}
		if got := p.pixel(cx+off, cy); got != faceColour {
			t.Errorf("front view, %d px right of the head's centre: %v, want the face's dot %v", off, got, faceColour)
		}
		if got := p.pixel(cx-off, cy); got != headFill {
			t.Errorf("front view, %d px left of the head's centre: %v, want the head's fill %v (the face turned the wrong way?)", off, got, headFill)
		}
		p.shot("robot-reference")
	})

	t.Run("phone width", func(t *testing.T) {
		p.t = t
		p.do("360 px viewport", chromedp.EmulateViewport(360, 760, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		defer p.do("reset viewport", chromedp.EmulateReset())
		pages := []struct{ hash, ready, name string }{
			{"/", "#system-status dd", "phone-dashboard"},
			{"/nodes", "#adopted table", "phone-nodes"},
			{"/nodes/sim-head", "#role-state", ""},
			{"/routes", "#route-flow", "phone-routes"},
			{"/routes/edit/websocket_direct", "#route-form", ""},
			{"/inputs", "#ws-clients table", ""},
			{"/settings", "#settings-form", ""},
			{"/logs", "#log-table tbody tr", ""},
			{"/robot", "#robot-canvas", ""},
		}
		for _, pg := range pages {
			p.open(s.url(pg.hash), pg.ready)
			w := p.eval(`document.documentElement.scrollWidth + ' ' + document.documentElement.clientWidth`)
			var scroll, client int
			fmt.Sscan(w, &scroll, &client)
			if scroll > client {
				t.Errorf("%s is %d px wide in a %d px screen", pg.hash, scroll, client)
			}
			if pg.name != "" {
				p.shot(pg.name)
			}
		}
	})
}

// TestTokenLogin runs a server with authentication on: the UI asks for
// the token, refuses a wrong one, and keeps the right one across a reload.
func TestTokenLogin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs saint-sim and Chromium")
	}
	t.Parallel()
	ctx := browser(t)
	// LiveLink on loopback: the end of the test allows and revokes a sender.
	s := startSim(t, "--auth", "--livelink", "127.0.0.1")
	var token string
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(filepath.Join(s.dataDir, "server", "api_token"))
		token = strings.TrimSpace(string(b))
		if err == nil && token == "" {
			err = fmt.Errorf("api_token is empty")
		}
		return err
	})
	p := newPage(t, ctx)
	p.open(s.url("/"), "#login-token")
	p.until("login required", `document.querySelector('#conn-state').dataset.state === 'login'`)
	p.shot("login")
	p.setValue("#login-token", strings.Repeat("0", 64))
	p.click("#login-form button[type=submit]")
	p.until("wrong token refused", `document.querySelector('#conn-state').dataset.state === 'login' &&
		document.querySelector('#login .form-error').textContent.includes('wrong API token')`)
	// Four more make five: this address must wait (1 s), and the form
	// says so, for the right token too; once the wait is over the right
	// token logs in.
	submit := func(tok, want string) {
		t.Helper()
		p.eval(`document.querySelector('#login .form-error').textContent = ''`)
		p.setValue("#login-token", tok)
		p.click("#login-form button[type=submit]")
		p.until(want, fmt.Sprintf(`document.querySelector('#conn-state').dataset.state === 'login' &&
			document.querySelector('#login .form-error').textContent.includes(%q)`, want))
	}
	for i := range 4 {
		submit(strings.Repeat(fmt.Sprint(i+1), 64), "wrong API token")
	}
	submit(token, "retry in")
	bustest.CheckFor(t, 20*time.Second, 300*time.Millisecond, func() error {
		p.setValue("#login-token", token)
		p.click("#login-form button[type=submit]")
		p.until("answered", `document.querySelector('#conn-state').dataset.state !== 'connecting'`)
		if st := p.eval(`document.querySelector('#conn-state').dataset.state`); st != "online" {
			return fmt.Errorf("the right token after the wait: %s, %q", st, p.eval(`document.querySelector('#login .form-error').textContent`))
		}
		return nil
	})
	p.until("logged in", `document.querySelector('#conn-state').dataset.state === 'online' && document.querySelector('#login').hidden`)
	p.do("dashboard", chromedp.WaitVisible(chromedp.CSS("#system-status dd")))
	p.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#system-status dd")))
	if st := p.eval(`document.querySelector('#conn-state').dataset.state`); st != "online" {
		t.Fatalf("after a reload the connection is %q, want online with the stored token", st)
	}
	// Regenerating the token closes every session; this browser has
	// stored the new token and reconnects with it.
	p.open(s.url("/settings"), "#regenerate-token")
	p.click("#regenerate-token")
	p.click("#confirm-ok")
	var fresh string
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(filepath.Join(s.dataDir, "server", "api_token"))
		fresh = strings.TrimSpace(string(b))
		if err == nil && (fresh == token || fresh == "") {
			err = fmt.Errorf("api_token unchanged")
		}
		return err
	})
	p.until("back online with the new token", fmt.Sprintf(`localStorage.getItem('saint.api_token') === %q &&
		document.querySelector('#conn-state').dataset.state === 'online'`, fresh))
	// The logs download takes the token too.
	got := p.eval(`fetch('/api/logs?download=1', {headers: {Authorization: 'Bearer ' + localStorage.getItem('saint.api_token')}}).then((r) => String(r.status))`, chromedp.EvalAwaitPromise)
	if got != "200" {
		t.Fatalf("log download with the stored token: HTTP %s", got)
	}

	// With authentication on, a LiveLink sender on this machine is
	// refused until it is allowed on the inputs page, and refused again
	// once revoked.
	stop := streamLiveLink(t, dialAPI(t, s, fresh))
	defer stop()
	refused := `#livelink-unknown tr[data-sender="127.0.0.1"] button[data-action=allow_sender]`
	p.open(s.url("/inputs"), refused)
	if n := p.eval(`String(document.querySelectorAll('#livelink-sources tr[data-subject="UITest"]').length)`); n != "0" {
		t.Fatalf("a refused sender's subject is listed (%s rows)", n)
	}
	if n := p.eval(`String(document.querySelectorAll('#livelink-loopback').length)`); n != "0" {
		t.Errorf("with authentication on, the page says loopback senders are allowed")
	}
	p.shot("inputs-livelink-refused")
	p.click(refused)
	p.until("sender allowed, its subject listed", `document.querySelector('#livelink-allowed tr[data-sender="127.0.0.1"]') !== null &&
		document.querySelector('#livelink-sources tr[data-subject="UITest"]') !== null`)
	p.click(`#livelink-allowed tr[data-sender="127.0.0.1"] button[data-action=revoke_sender]`)
	p.until("sender revoked and refused again", `document.querySelector('#livelink-allowed tr[data-sender]') === null &&
		document.querySelector('#livelink-unknown tr[data-sender="127.0.0.1"]') !== null`)
}
