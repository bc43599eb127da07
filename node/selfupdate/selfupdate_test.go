package selfupdate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/node"
)

// execCall is one call of the fake exec.
type execCall struct {
	path      string
	argv, env []string
	image     []byte // the file's content when it was executed
}

type rig struct {
	t        *testing.T
	dir      string
	store    *node.Store
	launcher string
	execs    []execCall
}

func newRig(t *testing.T) *rig {
	t.Helper()
	dir := t.TempDir()
	st, err := node.NewStore(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	launcher := filepath.Join(dir, "saint-node")
	if err := os.WriteFile(launcher, []byte("flashed binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, dir: dir, store: st, launcher: launcher}
}

func (r *rig) exec(path string, argv, env []string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r.execs = append(r.execs, execCall{path, argv, env, data})
	return nil
}

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (r *rig) install(version string, image []byte) string {
	r.t.Helper()
	p, err := r.store.InstallFirmware(image, node.InstalledFirmware{Version: version, Checksum: sumOf(image), Size: int64(len(image))})
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// process builds the Updater of one process: running exe with env.
func (r *rig) process(version, exe string, env []string, o Options) *Updater {
	r.t.Helper()
	o.Store, o.Version, o.Executable, o.Env, o.Exec = r.store, version, exe, env, r.exec
	o.Args = []string{exe, "--hal", "sim", "--id", "n1"}
	if o.HealthyAfter == 0 {
		o.HealthyAfter = 5 * time.Second
	}
	if o.TrialTimeout == 0 {
		o.TrialTimeout = 30 * time.Second
	}
	u, err := New(o)
	if err != nil {
		r.t.Fatal(err)
	}
	return u
}

func (r *rig) trialOpen() bool {
	_, err := os.Stat(r.store.Path(trialFile))
	return err == nil
}

func (r *rig) lastExec() execCall {
	r.t.Helper()
	if len(r.execs) == 0 {
		r.t.Fatal("nothing was executed")
	}
	return r.execs[len(r.execs)-1]
}

// applyV2 installs v1 then v2 as the node does, and applies v2 from a
// process running v1 (current.img). It returns the exec of the new image.
func (r *rig) applyV2() execCall {
	r.t.Helper()
	r.install("1.0.0", []byte("image v1"))
	v1 := r.process("1.0.0", r.store.Path(node.FirmwareCurrent), []string{"HOME=/root", LauncherEnv + "=" + r.launcher}, Options{})
	if err := v1.Boot(); err != nil || len(r.execs) != 0 {
		r.t.Fatalf("v1 boot: %v, execs %d", err, len(r.execs))
	}
	path := r.install("2.0.0", []byte("image v2"))
	if err := v1.Apply(path, "2.0.0"); err != nil {
		r.t.Fatal(err)
	}
	return r.lastExec()
}

func TestApplyOpensTrialAndExecsTheNewImage(t *testing.T) {
	r := newRig(t)
	call := r.applyV2()
	if call.path != r.store.Path(node.FirmwareCurrent) || string(call.image) != "image v2" {
		t.Errorf("executed %s holding %q, want current.img holding image v2", call.path, call.image)
	}
	if want := []string{call.path, "--hal", "sim", "--id", "n1"}; !slices.Equal(call.argv, want) {
		t.Errorf("argv %q, want %q", call.argv, want)
	}
	if !slices.Contains(call.env, TrialEnv+"=2.0.0") || !slices.Contains(call.env, "HOME=/root") || !slices.Contains(call.env, LauncherEnv+"="+r.launcher) {
		t.Errorf("env %q lacks the trial, the launcher or the inherited variables", call.env)
	}
	if !r.trialOpen() {
		t.Error("no trial record after Apply")
	}
	prev, ok := r.store.PreviousFirmware()
	if !ok || prev.Version != "1.0.0" {
		t.Errorf("previous record %+v, %v", prev, ok)
	}
}

// newImage is the process the trial exec started.
func (r *rig) newImage(call execCall, o Options) *Updater {
	r.t.Helper()
	u := r.process("2.0.0", call.path, call.env, o)
	n := len(r.execs)
	if err := u.Boot(); err != nil {
		r.t.Fatal(err)
	}
	if len(r.execs) != n || !u.OnTrial() {
		r.t.Fatalf("the new image did not run on trial (execs %d → %d, on trial %v)", n, len(r.execs), u.OnTrial())
	}
	return u
}

func TestHealthyTrialIsKept(t *testing.T) {
	r := newRig(t)
	u := r.newImage(r.applyV2(), Options{HealthyAfter: 5 * time.Second})
	ex := executor.NewVirtual()
	state := msg.StateBoot
	u.Watch(ex, func() node.State { return state })
	ctx := context.Background()
	// Two seconds in BOOT, four UNADOPTED, a blip back to BOOT: the five
	// healthy seconds start again after it.
	_ = ex.RunFor(ctx, 2*time.Second)
	state = msg.StateUnadopted
	_ = ex.RunFor(ctx, 4*time.Second)
	state = msg.StateBoot
	_ = ex.RunFor(ctx, time.Second)
	state = msg.StateActive
	_ = ex.RunFor(ctx, 4*time.Second)
	if !r.trialOpen() || !u.OnTrial() {
		t.Fatal("trial closed before five uninterrupted healthy seconds")
	}
	_ = ex.RunFor(ctx, 1500*time.Millisecond)
	if r.trialOpen() || u.OnTrial() {
		t.Error("trial still open after five healthy seconds")
	}
	inst, _ := r.store.InstalledFirmware()
	if inst.Version != "2.0.0" || len(r.execs) != 1 {
		t.Errorf("after a healthy trial: installed %s, execs %d", inst.Version, len(r.execs))
	}
	// The next start of the flashed binary hands over to 2.0.0, not on trial.
	launcher := r.process("0.1.0", r.launcher, []string{"HOME=/root"}, Options{})
	if err := launcher.Boot(); err != nil {
		t.Fatal(err)
	}
	call := r.lastExec()
	if string(call.image) != "image v2" || slices.ContainsFunc(call.env, func(kv string) bool { return envValue([]string{kv}, TrialEnv) != "" }) {
		t.Errorf("after confirmation the launcher executed %q with env %q", call.image, call.env)
	}
}

func TestImageThatDiesIsRolledBackOnNextStart(t *testing.T) {
	r := newRig(t)
	r.newImage(r.applyV2(), Options{})
	// The new image exits; the service manager starts the flashed binary.
	launcher := r.process("0.1.0", r.launcher, []string{"HOME=/root"}, Options{})
	if err := launcher.Boot(); err != nil {
		t.Fatal(err)
	}
	call := r.lastExec()
	if call.path != r.store.Path(node.FirmwareCurrent) || string(call.image) != "image v1" {
		t.Errorf("after rollback executed %s holding %q, want current.img holding image v1", call.path, call.image)
	}
	if slices.Contains(call.env, TrialEnv+"=2.0.0") {
		t.Error("the restored image was started as a trial")
	}
	if r.trialOpen() {
		t.Error("trial still open after rollback")
	}
	inst, _ := r.store.InstalledFirmware()
	if inst.Version != "1.0.0" {
		t.Errorf("installed record %+v after rollback, want 1.0.0", inst)
	}
	rej, ok := r.store.RejectedFirmware("2.0.0", sumOf([]byte("image v2")))
	if !ok || rej.Reason == "" {
		t.Errorf("2.0.0 not recorded as rejected: %+v", rej)
	}
	if kept, _ := os.ReadFile(r.store.Path("firmware/rejected.img")); string(kept) != "image v2" {
		t.Errorf("rejected.img = %q", kept)
	}
}

func TestTrialThatNeverGetsHealthyRollsItselfBack(t *testing.T) {
	r := newRig(t)
	u := r.newImage(r.applyV2(), Options{HealthyAfter: 5 * time.Second, TrialTimeout: 20 * time.Second})
	ex := executor.NewVirtual()
	u.Watch(ex, func() node.State { return msg.StateBoot })
	_ = ex.RunFor(context.Background(), 19*time.Second)
	if !r.trialOpen() || len(r.execs) != 1 {
		t.Fatalf("rolled back before the trial timeout (execs %d)", len(r.execs))
	}
	_ = ex.RunFor(context.Background(), 2*time.Second)
	call := r.lastExec()
	if len(r.execs) != 2 || string(call.image) != "image v1" || r.trialOpen() {
		t.Errorf("after the trial timeout: execs %d, last ran %q, trial open %v", len(r.execs), call.image, r.trialOpen())
	}
}

func TestRollbackWithoutPreviousReturnsToTheFlashedBinary(t *testing.T) {
	r := newRig(t)
	path := r.install("2.0.0", []byte("image v2"))
	flashed := r.process("1.0.0", r.launcher, []string{"HOME=/root"}, Options{})
	if err := flashed.Boot(); err != nil {
		t.Fatal(err)
	}
	if err := flashed.Apply(path, "2.0.0"); err != nil {
		t.Fatal(err)
	}
	// The image dies; the service manager starts the flashed binary.
	again := r.process("1.0.0", r.launcher, []string{"HOME=/root"}, Options{})
	n := len(r.execs)
	if err := again.Boot(); err != nil {
		t.Fatal(err)
	}
	if len(r.execs) != n {
		t.Errorf("with no previous image the flashed binary should run itself, but executed %s", r.lastExec().path)
	}
	if _, err := os.Stat(r.store.Path(node.FirmwareCurrent)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("current.img still there: %v", err)
	}
	if _, ok := r.store.InstalledFirmware(); ok {
		t.Error("installed record still there")
	}
}

func TestDamagedInstalledImageIsNotStarted(t *testing.T) {
	r := newRig(t)
	r.install("1.0.0", []byte("image v1"))
	r.install("2.0.0", []byte("image v2"))
	if err := os.WriteFile(r.store.Path(node.FirmwareCurrent), []byte("image v2, bit rot"), 0o755); err != nil {
		t.Fatal(err)
	}
	launcher := r.process("0.1.0", r.launcher, nil, Options{})
	if err := launcher.Boot(); err != nil {
		t.Fatal(err)
	}
	if call := r.lastExec(); string(call.image) != "image v1" {
		t.Errorf("executed %q, want the previous intact image", call.image)
	}
}

func TestFailedExecRestoresThePreviousImage(t *testing.T) {
	r := newRig(t)
	r.install("1.0.0", []byte("image v1"))
	path := r.install("2.0.0", []byte("image v2"))
	u, err := New(Options{Store: r.store, Version: "1.0.0", Executable: r.launcher, Env: []string{}, Args: []string{"x"},
		Exec: func(string, []string, []string) error { return errors.New("exec format error") }})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Apply(path, "2.0.0"); err == nil {
		t.Fatal("Apply succeeded although exec failed")
	}
	cur, _ := os.ReadFile(r.store.Path(node.FirmwareCurrent))
	if !bytes.Equal(cur, []byte("image v1")) || r.trialOpen() {
		t.Errorf("after a failed exec current.img holds %q, trial open %v", cur, r.trialOpen())
	}
}

func TestOptionsChecked(t *testing.T) {
	r := newRig(t)
	if _, err := New(Options{Store: r.store}); err == nil {
		t.Error("missing version accepted")
	}
	if _, err := New(Options{Store: r.store, Version: "1", Executable: r.launcher, HealthyAfter: time.Minute, TrialTimeout: time.Second}); err == nil {
		t.Error("a trial timeout shorter than the healthy time accepted")
	}
}

func TestPreStartHookRollsBackAFailedTrial(t *testing.T) {
	r := newRig(t)
	r.newImage(r.applyV2(), Options{})
	hook := r.process("0.1.0", r.launcher, []string{"HOME=/root"}, Options{})
	n := len(r.execs)
	rolled, err := hook.CheckTrial()
	if err != nil || !rolled {
		t.Fatalf("CheckTrial = %v, %v; want a rollback", rolled, err)
	}
	if len(r.execs) != n {
		t.Error("the pre-start hook executed an image; it only rolls back")
	}
	if inst, _ := r.store.InstalledFirmware(); inst.Version != "1.0.0" || r.trialOpen() {
		t.Errorf("after the hook: installed %s, trial open %v", inst.Version, r.trialOpen())
	}
	if rolled, err := hook.CheckTrial(); rolled || err != nil {
		t.Errorf("second CheckTrial = %v, %v; want nothing to do", rolled, err)
	}
}
