package saint_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// importRule is one family of packages that roles, node and server must not
// import, with the reason given when they do.
type importRule struct {
	prefix string // an import path; it and everything below it
	why    string
}

// importRules returns the import rule (docs/architecture.md): only cmd/
// (and tests) choose real or simulated hardware. Every hardware backend is
// listed: the periph.io adapters, sysfs PWM, SocketCAN, the serial ports, the V4L2
// camera and the Raspberry Pi board itself.
func importRules() []importRule {
	const hw = "real hardware backends are chosen by cmd/, not by the code that runs on them"
	const sim = "the simulator is chosen by cmd/ and tests, never by the code it simulates"
	return []importRule{
		{"github.com/saint-os/saint/sim", sim},
		{"github.com/saint-os/saint/hal/periph", hw},
		{"github.com/saint-os/saint/hal/socketcan", hw},
		{"github.com/saint-os/saint/hal/sysfspwm", hw},
		{"github.com/saint-os/saint/hal/rpicam", hw},
		{"github.com/saint-os/saint/hal/serial", hw},
		{"github.com/saint-os/saint/hal/v4l2", hw},
		{"github.com/saint-os/saint/hal/board/pi", hw},
		{"periph.io", hw},
		{"go.einride.tech/can/pkg/socketcan", hw},
		{"go.bug.st/serial", hw},
	}
}

// guardedDirs are the trees the rule applies to.
func guardedDirs() []string { return []string{"roles", "node", "server"} }

// forbiddenImport reports the rule that path breaks, if any. A rule's prefix
// matches itself and the packages below it, not a longer name that merely
// starts the same ("…/simulator" is not "…/sim").
func forbiddenImport(path string) (importRule, bool) {
	for _, r := range importRules() {
		if path == r.prefix || strings.HasPrefix(path, r.prefix+"/") {
			return r, true
		}
	}
	return importRule{}, false
}

// listedPackage is the part of `go list -json` output the rule needs.
type listedPackage struct {
	ImportPath string
	Imports    []string
	DepOnly    bool
}

// importViolations walks the import graph from every package that was asked
// for (not DepOnly) and returns one line per forbidden package it reaches,
// with the chain of imports that leads there. It does not walk into a
// forbidden package.
func importViolations(pkgs []listedPackage) []string {
	byPath := make(map[string]listedPackage, len(pkgs))
	var roots []string
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
		if !p.DepOnly {
			roots = append(roots, p.ImportPath)
		}
	}
	sort.Strings(roots)
	var out []string
	for _, root := range roots {
		// Breadth first, so the chain reported is a shortest one.
		parent := map[string]string{root: ""}
		queue := []string{root}
		var hits []string
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, imp := range byPath[cur].Imports {
				if _, seen := parent[imp]; seen {
					continue
				}
				parent[imp] = cur
				if r, bad := forbiddenImport(imp); bad {
					chain := []string{imp}
					for p := cur; p != ""; p = parent[p] {
						chain = append([]string{p}, chain...)
					}
					hits = append(hits, fmt.Sprintf("%s imports %s (%s): %s", root, imp, r.why, strings.Join(chain, " → ")))
					continue
				}
				queue = append(queue, imp)
			}
		}
		sort.Strings(hits)
		out = append(out, hits...)
	}
	return out
}

// hasGoFiles reports whether dir holds a non-test Go file anywhere below it.
func hasGoFiles(dir string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: nothing there to check
		}
		if found {
			return fs.SkipAll
		}
		name := d.Name()
		if d.IsDir() && path != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			found = true
		}
		return nil
	})
	return found
}

// checkImportRule lists the guarded trees of the module in root with their
// dependencies (without tests: tests may use the simulator) and returns the
// violations, the trees skipped because they hold no Go code yet, and how
// many packages were checked.
func checkImportRule(t *testing.T, root string, env ...string) (violations, skipped []string, checked int) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list packages with: %v", err)
	}
	var patterns []string
	for _, d := range guardedDirs() {
		if hasGoFiles(filepath.Join(root, d)) {
			patterns = append(patterns, "./"+d+"/...")
		} else {
			skipped = append(skipped, d)
		}
	}
	if len(patterns) == 0 {
		return nil, skipped, 0
	}
	// -e: a package that does not build (or a forbidden module missing from
	// go.mod) is still listed with its imports, so the rule is still
	// checked.
	cmd := exec.Command(goBin, append([]string{"list", "-e", "-deps", "-json=ImportPath,Imports,DepOnly"}, patterns...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list %v: %v\n%s", patterns, err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(&stdout)
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
		if !p.DepOnly {
			checked++
		}
	}
	return importViolations(pkgs), skipped, checked
}

// TestImportRule enforces the import rule on this repository.
func TestImportRule(t *testing.T) {
	violations, skipped, checked := checkImportRule(t, ".")
	for _, d := range skipped {
		t.Logf("%s/: no Go code yet, nothing to check", d)
	}
	t.Logf("checked %d packages under %v and their dependencies", checked, guardedDirs())
	for _, v := range violations {
		t.Error(v)
	}
}

func TestForbiddenImport(t *testing.T) {
	for _, tc := range []struct {
		path string
		bad  bool
	}{
		{"github.com/saint-os/saint/sim", true},
		{"github.com/saint-os/saint/sim/board", true},
		{"github.com/saint-os/saint/sim/twin/mpu6050", true},
		{"github.com/saint-os/saint/simulator", false},
		{"github.com/saint-os/saint/hal/periph", true},
		{"github.com/saint-os/saint/hal/periph/rpi", true},
		{"github.com/saint-os/saint/hal/peripheral", false},
		{"github.com/saint-os/saint/hal/socketcan", true},
		{"github.com/saint-os/saint/hal/serial", true},
		{"github.com/saint-os/saint/hal/sysfspwm", true},
		{"github.com/saint-os/saint/hal/sysfspwm/sysfspwmtest", true},
		{"github.com/saint-os/saint/hal/rpicam", true},
		{"github.com/saint-os/saint/hal/gpio", false},
		{"github.com/saint-os/saint/hal/board/boardtest", false},
		{"github.com/saint-os/saint/hal/v4l2", true},
		{"github.com/saint-os/saint/hal/board/pi", true},
		{"github.com/saint-os/saint/hal/board/pi/smoketest", true},
		{"github.com/saint-os/saint/hal/board/pico", false},
		{"github.com/saint-os/saint/hal/board/rpi", false},
		{"github.com/saint-os/saint/hal/camera", false},
		{"periph.io/x/conn/v3/i2c", true},
		{"periph.io/x/host/v3", true},
		{"go.einride.tech/can/pkg/socketcan", true},
		{"go.einride.tech/can", false},
		{"go.bug.st/serial", true},
		{"go.bug.st/serial/enumerator", true},
		{"go.bug.st/serialx", false},
		{"github.com/nats-io/nats.go", false},
	} {
		if _, bad := forbiddenImport(tc.path); bad != tc.bad {
			t.Errorf("forbiddenImport(%q) = %v, want %v", tc.path, bad, tc.bad)
		}
	}
}

func TestImportViolations(t *testing.T) {
	const m = "github.com/saint-os/saint/"
	pkgs := []listedPackage{
		{ImportPath: m + "roles/head", Imports: []string{m + "hal/device/mpu6050", "fmt"}},
		{ImportPath: m + "roles/tracks", Imports: []string{m + "hal/gpio"}},
		{ImportPath: m + "node", Imports: []string{m + "hal/periph"}},
		{ImportPath: m + "hal/device/mpu6050", Imports: []string{m + "sim/twin/mpu6050"}, DepOnly: true},
		{ImportPath: m + "sim/twin/mpu6050", Imports: []string{"periph.io/x/conn/v3"}, DepOnly: true},
		{ImportPath: m + "hal/gpio", DepOnly: true},
		{ImportPath: m + "hal/periph", DepOnly: true},
		{ImportPath: "fmt", DepOnly: true},
	}
	got := importViolations(pkgs)
	if len(got) != 2 {
		t.Fatalf("got %d violations, want 2 (node, roles/head):\n%s", len(got), strings.Join(got, "\n"))
	}
	if !strings.HasPrefix(got[0], m+"node imports "+m+"hal/periph") {
		t.Errorf("first violation %q", got[0])
	}
	// The chain shows how roles/head reached the simulator, and the walk
	// stops there (periph.io behind it is not reported again).
	want := m + "roles/head → " + m + "hal/device/mpu6050 → " + m + "sim/twin/mpu6050"
	if !strings.HasSuffix(got[1], want) {
		t.Errorf("second violation %q, want it to end with %q", got[1], want)
	}
	if v := importViolations(pkgs[1:2]); len(v) != 0 {
		t.Errorf("clean package reported: %v", v)
	}
}

// TestImportRuleFailsOnAViolatingTree runs the whole check, go list
// included, on a throwaway module laid out like this one, in which a role
// imports the simulator and another a hardware module missing from go.mod:
// the check must report both, and must not report an import from a test
// file.
func TestImportRuleFailsOnAViolatingTree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list on a scratch module")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":             "module github.com/saint-os/saint\n\ngo 1.22\n",
		"sim/board/board.go": "package board\n\nconst Pins = 28\n",
		"roles/head/head.go": "package head\n\nimport _ \"github.com/saint-os/saint/sim/board\"\n",
		"roles/arms/arms.go": "package arms\n",
		// A hardware module that is not even in go.mod is still caught.
		"roles/tracks/tracks.go": "package tracks\n\nimport _ \"periph.io/x/conn/v3/gpio\"\n",
		"roles/arms/x_test.go":   "package arms\n\nimport _ \"github.com/saint-os/saint/sim/board\"\n",
		"node/node.go":           "package node\n\nimport _ \"github.com/saint-os/saint/roles/arms\"\n",
		"server/README":          "no Go code yet\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	violations, skipped, _ := checkImportRule(t, dir, "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
	if len(violations) != 2 ||
		!strings.Contains(violations[0], "roles/head imports github.com/saint-os/saint/sim/board") ||
		!strings.Contains(violations[1], "roles/tracks imports periph.io/x/conn/v3/gpio") {
		t.Errorf("violations = %q, want roles/head importing sim/board and roles/tracks importing periph.io", violations)
	}
	if len(skipped) != 1 || skipped[0] != "server" {
		t.Errorf("skipped = %q, want [server]", skipped)
	}
}

// TestNodeFirmwareLinksNoBroker keeps the NATS server out of saint-node: the
// node only connects to the broker, and linking the server would add its
// size and package initialisation to every node's start.
func TestNodeFirmwareLinksNoBroker(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list packages with: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "./cmd/saint-node").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/nats-io/nats-server/") || p == "github.com/saint-os/saint/bus/natsbus/broker" {
			t.Errorf("saint-node links %s", p)
		}
	}
}
