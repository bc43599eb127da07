package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/internal/childproc"
)

// The npm packages of the app, pinned.
var appPackages = []string{"@foxglove/studio-base@1.48.0", "react@17.0.2", "react-dom@17.0.2"}

//go:embed web
var web embed.FS

func main() {
	log.SetFlags(0)
	log.SetPrefix("foxglovescreenshot: ")
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	out := flag.String("out", "docs/screenshots/foxglove.png", "write the PNG here")
	layoutFile := flag.String("layout", "docs/foxglove/saint.json", "the Foxglove layout to load")
	appDir := flag.String("app", "", "a directory where the app's npm packages are (or are to be) installed; default: a temporary one, removed at the end")
	settle := flag.Duration("settle", 40*time.Second, "how long the app shows the live robot before the screenshot")
	width := flag.Int("width", 1600, "window width in pixels")
	height := flag.Int("height", 1000, "window height in pixels")
	chrome := flag.String("chrome", "", "Chromium or Chrome binary (default: chromium, chromium-browser, google-chrome on PATH)")
	var edits paramEdits
	flag.Var(&edits, "set", "NAME=JSON: edit this parameter in the layout's Parameters panel before the screenshot (repeatable)")
	flag.Parse()

	layout, err := os.ReadFile(*layoutFile)
	if err != nil {
		return fmt.Errorf("%v (run from the repository's root)", err)
	}
	if !json.Valid(layout) {
		return fmt.Errorf("%s: not JSON", *layoutFile)
	}
	browser, err := findChrome(*chrome)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "foxglovescreenshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *appDir == "" {
		*appDir = filepath.Join(tmp, "app")
	}
	if err := installApp(*appDir); err != nil {
		return err
	}

	// The app's page: its origin must be allowed by saint-sim's Foxglove
	// server, so it listens first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	origin := "http://" + ln.Addr().String()
	go func() { _ = http.Serve(ln, appHandler(*appDir, layout)) }()

	sim, addrs, err := startSim(tmp, origin)
	if err != nil {
		return err
	}
	defer stopSim(sim)
	log.Printf("saint-sim: Foxglove on ws://%s, app on %s", addrs["foxglove"], origin)

	ctx, cancel := context.WithTimeout(context.Background(), *settle+3*time.Minute)
	defer cancel()
	go drive(ctx, addrs["ws"])

	png, err := screenshot(ctx, browser, origin+"/?ds=foxglove-websocket&ds.url="+"ws://"+addrs["foxglove"], *width, *height, *settle, edits)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(*out, png, 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s (%d bytes)", *out, len(png))
	return nil
}

func findChrome(name string) (string, error) {
	names := []string{"chromium", "chromium-browser", "google-chrome"}
	if name != "" {
		names = []string{name}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no browser: none of %s found (install chromium)", strings.Join(names, ", "))
}

// installApp installs the app's npm packages into dir, unless they are
// there already.
func installApp(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "node_modules/@foxglove/studio-base/assets/index.js")); err == nil {
		return nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return errors.New("npm is not installed (make test-deps installs it)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	log.Printf("npm install %s into %s", strings.Join(appPackages, " "), dir)
	args := append([]string{"install", "--prefix", dir, "--no-save", "--no-package-lock", "--ignore-scripts", "--no-audit", "--no-fund"}, appPackages...)
	cmd := exec.Command("npm", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install: %w", err)
	}
	return nil
}

// appHandler serves the start page, the app's bundle, React and the
// layout.
func appHandler(dir string, layout []byte) http.Handler {
	page, _ := fs.Sub(web, "web")
	modules := filepath.Join(dir, "node_modules")
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(page))
	mux.Handle("GET /app/", http.StripPrefix("/app/", http.FileServer(http.Dir(filepath.Join(modules, "@foxglove/studio-base/assets")))))
	mux.Handle("GET /react/", http.StripPrefix("/react/", http.FileServer(http.Dir(filepath.Join(modules, "react")))))
	mux.Handle("GET /react-dom/", http.StripPrefix("/react-dom/", http.FileServer(http.Dir(filepath.Join(modules, "react-dom")))))
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /layout.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(layout)
	})
	return mux
}

// startSim builds and starts saint-sim with every node adopted and the
// Foxglove server on a free port, allowing the app's origin, as a child
// that dies with this program (internal/childproc).
func startSim(tmp, origin string) (*childproc.Process, map[string]string, error) {
	bin := filepath.Join(tmp, "saint-sim")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/saint-sim").CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("go build ./cmd/saint-sim: %v\n%s", err, out)
	}
	addrFile := filepath.Join(tmp, "addrs.json")
	cmd := exec.Command(bin, "--adopt", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--foxglove", "127.0.0.1:0",
		"--allow-origin", origin, "--data", filepath.Join(tmp, "data"), "--addr-file", addrFile)
	cmd.Stderr = os.Stderr
	sim, err := childproc.Start(cmd)
	if err != nil {
		return nil, nil, err
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		b, err := os.ReadFile(addrFile)
		if err != nil {
			continue
		}
		var addrs map[string]string
		if err := json.Unmarshal(b, &addrs); err == nil && addrs["foxglove"] != "" && addrs["ws"] != "" {
			return sim, addrs, nil
		}
	}
	stopSim(sim)
	return nil, nil, errors.New("saint-sim did not write its addresses within a minute")
}

func stopSim(sim *childproc.Process) {
	_ = sim.Stop(syscall.SIGINT, 10*time.Second)
}

// drive moves the robot over the WebSocket API until ctx ends: the tracks
// on a slow circle, the head looking left and right.
func drive(ctx context.Context, wsAddr string) {
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+wsAddr+"/saint", nil)
	if err != nil {
		log.Printf("drive: %v", err)
		return
	}
	defer conn.Close()
	go func() { // read and drop the replies
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		cmds := []map[string]any{{"type": "command", "target": "tracks", "action": "drive", "params": map[string]any{"linear": 0.3, "angular": 0.25}}}
		if i%20 == 0 {
			pan := 35.0
			if i%40 == 0 {
				pan = -35
			}
			cmds = append(cmds, map[string]any{"type": "command", "target": "head", "action": "move", "params": map[string]any{"pan": pan, "tilt": -10}})
		}
		for j, c := range cmds {
			c["id"] = fmt.Sprint(i, "-", j)
			if err := conn.WriteJSON(c); err != nil {
				log.Printf("drive: %v", err)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// screenshot opens url in headless Chromium (WebGL in software, for the 3D
// panel), waits for the app to draw, makes the edits in the Parameters
// panel, lets it run for settle and returns a PNG of the window.
func screenshot(ctx context.Context, browser, url string, width, height int, settle time.Duration, edits paramEdits) ([]byte, error) {
	opts := append(append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...),
		chromedp.ExecPath(browser), chromedp.WindowSize(width, height), chromedp.NoSandbox,
		chromedp.Flag("use-angle", "swiftshader"), chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.Flag("ignore-gpu-blocklist", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	// The page's errors go to the log: they say why a panel stays empty.
	messages := chromedp.Console(bctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				log.Printf("page: %s %s", m, m.URL)
			}
		}
	}()
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(int64(width), int64(height)), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("canvas"))); err != nil {
		return nil, fmt.Errorf("the app did not draw: %w", err)
	}
	log.Printf("the app is up; waiting for every panel's data")
	if err := waitForData(bctx, 2*time.Minute); err != nil {
		return nil, err
	}
	if err := editParams(bctx, edits); err != nil {
		return nil, err
	}
	log.Printf("every panel has data; letting the app show the robot for %v", settle)
	if err := chromedp.Do(bctx, chromedp.Sleep(settle)); err != nil {
		return nil, err
	}
	if err := waitForData(bctx, 10*time.Second); err != nil {
		return nil, err
	}
	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		return nil, err
	}
	return png, nil
}

// waitingText is what the app's panels show while they have no message:
// the Image panel, Raw Messages.
var waitingText = []string{"Waiting for images", "Waiting for next message", "Select a topic"}

// waitForData waits until no panel shows that it is waiting for data.
func waitForData(ctx context.Context, timeout time.Duration) error {
	js, _ := json.Marshal(waitingText)
	expr := `(() => { const t = document.body.innerText; return ` + string(js) + `.filter((w) => t.includes(w)).join(", "); })()`
	var waiting string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		var err error
		if waiting, err = chromedp.Run(ctx, chromedp.Evaluate[string](expr)); err != nil {
			return err
		}
		if waiting == "" {
			return nil
		}
	}
	return fmt.Errorf("after %v a panel still shows %q: no data reached it", timeout, waiting)
}
