package selfupdate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/persist"
)

// TrialEnv is the environment variable Apply sets for the image it execs:
// the version on trial. A start without it while a trial is open is a
// restart after a failure.
const TrialEnv = "SAINT_FIRMWARE_TRIAL"

// LauncherEnv carries the path of the binary the service manager started
// (the flashed one) across hand-overs, so a rollback with no previous image
// can return to it.
const LauncherEnv = "SAINT_NODE_LAUNCHER"

// trialFile is the open trial's record, relative to the state directory.
const trialFile = "firmware/trial.yaml"

// Defaults for Options fields left zero.
const (
	DefaultHealthyAfter = 20 * time.Second
	DefaultTrialTimeout = 3 * time.Minute
	checkPeriod         = 250 * time.Millisecond
)

// ExecFunc replaces the process with the program at path (syscall.Exec).
// It returns only on failure.
type ExecFunc func(path string, argv, env []string) error

// Options configures an Updater.
type Options struct {
	Store   *node.Store // required: the node's state directory
	Version string      // the running binary's firmware version (required)
	// Executable is the running binary; "" means os.Executable().
	Executable string
	// Args and Env are what the next image is started with; nil means
	// os.Args and os.Environ().
	Args, Env []string
	// Exec defaults to syscall.Exec.
	Exec ExecFunc
	// HealthyAfter is how long a new image must stay UNADOPTED or ACTIVE
	// to be kept; TrialTimeout is how long it has to get there.
	HealthyAfter, TrialTimeout time.Duration
	// Clock stamps records written outside the executor (Boot, Apply);
	// nil means the wall clock.
	Clock clock.Clock
	Log   *slog.Logger
}

// Trial is firmware/trial.yaml: the image on trial and what it replaced.
type Trial struct {
	Version         string `yaml:"version"`
	Checksum        string `yaml:"checksum_sha256"`
	PreviousVersion string `yaml:"previous_version"`
	StartedAt       string `yaml:"started_at"`
}

// Updater is the node.Updater of a real node.
type Updater struct {
	o       Options
	log     *slog.Logger
	onTrial bool // this process is an image on trial
	// launcher is the binary the service manager started.
	launcher string
	trial    Trial
	watch    *executor.Timer
}

// New checks opts. It does not touch the state directory; Boot does.
func New(opts Options) (*Updater, error) {
	if opts.Store == nil || opts.Version == "" {
		return nil, errors.New("selfupdate: Store and Version are required")
	}
	if opts.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("selfupdate: finding the running binary: %w", err)
		}
		opts.Executable = exe
	}
	if opts.Args == nil {
		opts.Args = os.Args
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.Exec == nil {
		opts.Exec = syscall.Exec
	}
	if opts.HealthyAfter <= 0 {
		opts.HealthyAfter = DefaultHealthyAfter
	}
	if opts.TrialTimeout <= 0 {
		opts.TrialTimeout = DefaultTrialTimeout
	}
	if opts.TrialTimeout < opts.HealthyAfter {
		return nil, fmt.Errorf("selfupdate: TrialTimeout %v is shorter than HealthyAfter %v; a new image could never pass", opts.TrialTimeout, opts.HealthyAfter)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Updater{o: opts, log: opts.Log.With("component", "selfupdate")}, nil
}

// OnTrial reports whether this process is a new image on trial (set by
// Boot).
func (u *Updater) OnTrial() bool { return u.onTrial }

// Boot runs before the node starts: it rolls back a failed trial and hands
// over to the installed image when that is not the running binary (it
// then execs and returns only on failure). A nil error means: run on as
// this binary.
func (u *Updater) Boot() error {
	if u.launcher = envValue(u.o.Env, LauncherEnv); u.launcher == "" {
		u.launcher = u.o.Executable
		u.o.Env = append(u.o.Env, LauncherEnv+"="+u.launcher)
	}
	handOver := envValue(u.o.Env, TrialEnv)
	u.o.Env = withoutEnv(u.o.Env, TrialEnv)
	if _, err := u.checkTrial(handOver); err != nil {
		return err
	}
	if u.onTrial {
		return nil
	}
	return u.handOver()
}

// CheckTrial is the service manager's pre-start hook (saint-node
// --rollback-check): a trial still open when the service starts again
// failed, so it rolls it back. It reports whether it did.
func (u *Updater) CheckTrial() (rolledBack bool, err error) {
	return u.checkTrial("")
}

// checkTrial rolls back an open trial unless this process is its
// hand-over (handOver, the version Apply passed in TrialEnv, names it),
// in which case it marks this process as on trial.
func (u *Updater) checkTrial(handOver string) (bool, error) {
	trial, open, err := u.loadTrial()
	if err != nil {
		u.log.Error("trial record unreadable; treating it as a failed trial", "err", err)
		open = true
	}
	switch {
	case open && handOver != "" && handOver == trial.Version && u.runningCurrent():
		u.onTrial, u.trial = true, trial
		u.log.Info("firmware on trial", "version", trial.Version, "previous", trial.PreviousVersion,
			"healthy_after", u.o.HealthyAfter, "timeout", u.o.TrialTimeout)
		return false, nil
	case open:
		reason := fmt.Sprintf("did not come up healthy: the node started again before %s was confirmed", trial.Version)
		if handOver != "" {
			reason = fmt.Sprintf("hand-over to %s found %s on trial", handOver, trial.Version)
		}
		return true, u.rollBack(reason)
	}
	return false, nil
}

// handOver execs current.img if it is installed, intact and not the
// running binary.
func (u *Updater) handOver() error {
	st := u.o.Store
	cur := st.Path(node.FirmwareCurrent)
	inst, ok := st.InstalledFirmware()
	if _, err := os.Stat(cur); err != nil || !ok {
		return nil
	}
	if u.runningCurrent() {
		return nil
	}
	if sum, err := fileSHA256(cur); err != nil || !strings.EqualFold(sum, inst.Checksum) {
		reason := fmt.Sprintf("installed image damaged: sha256 %s, recorded %s", short(sum), short(inst.Checksum))
		if err != nil {
			reason = "installed image unreadable: " + err.Error()
		}
		u.log.Error("not starting the installed firmware", "reason", reason)
		if err := u.rollBack(reason); err != nil {
			return err
		}
		return u.handOver()
	}
	u.log.Info("starting the installed firmware", "version", inst.Version, "path", cur, "from", u.o.Executable)
	if err := u.o.Exec(cur, u.argv(cur), u.o.Env); err != nil {
		return fmt.Errorf("selfupdate: exec %s: %w", cur, err)
	}
	return nil
}

// Apply implements node.Updater: path holds the verified new image
// (firmware/current.img, the previous one already kept). It opens the
// trial and execs the image; it returns only if that fails, after putting
// the previous image back.
func (u *Updater) Apply(path, version string) error {
	inst, _ := u.o.Store.InstalledFirmware()
	trial := Trial{
		Version:         version,
		Checksum:        inst.Checksum,
		PreviousVersion: u.o.Version,
		StartedAt:       u.o.Clock.Now().UTC().Format(time.RFC3339),
	}
	data, err := yaml.Marshal(trial)
	if err != nil {
		return fmt.Errorf("selfupdate: %w", err)
	}
	if err := persist.WriteFile(u.o.Store.Path(trialFile), data, 0o644); err != nil {
		return err
	}
	u.log.Info("executing new firmware", "version", version, "path", path)
	env := append(withoutEnv(u.o.Env, TrialEnv), TrialEnv+"="+version)
	execErr := u.o.Exec(path, u.argv(path), env)
	if execErr == nil {
		// A fake exec in a test returned: this process is now "the new
		// image".
		return nil
	}
	if err := u.rollBack("exec failed: " + execErr.Error()); err != nil {
		return fmt.Errorf("selfupdate: exec %s: %v; rolling back: %w", path, execErr, err)
	}
	return fmt.Errorf("selfupdate: exec %s: %w", path, execErr)
}

// Watch runs the trial's health check on ex: state is the node's state
// (node.Node.State, called on ex). It does nothing unless this process is
// on trial. Call it once the node has started.
func (u *Updater) Watch(ex *executor.Executor, state func() node.State) {
	if !u.onTrial {
		return
	}
	start := ex.Now()
	var upSince time.Time
	u.watch = ex.Every(checkPeriod, func() {
		now := ex.Now()
		switch s := state(); {
		case s == msg.StateUnadopted || s == msg.StateActive:
			if upSince.IsZero() {
				upSince = now
			}
		default:
			upSince = time.Time{}
		}
		switch {
		case !upSince.IsZero() && now.Sub(upSince) >= u.o.HealthyAfter:
			u.watch.Stop()
			u.confirm()
		case now.Sub(start) >= u.o.TrialTimeout:
			u.watch.Stop()
			u.failTrial(state())
		}
	})
}

// confirm closes the trial: the new image stays.
func (u *Updater) confirm() {
	if err := persist.Remove(u.o.Store.Path(trialFile)); err != nil {
		u.log.Error("closing the firmware trial", "err", err)
		return
	}
	u.onTrial = false
	u.log.Info("firmware confirmed healthy", "version", u.trial.Version, "after", u.o.HealthyAfter)
}

// failTrial rolls back an image that is running but never became healthy,
// and execs the restored one.
func (u *Updater) failTrial(last node.State) {
	reason := fmt.Sprintf("not UNADOPTED or ACTIVE for %v within %v (last state %s)", u.o.HealthyAfter, u.o.TrialTimeout, last)
	u.log.Error("firmware trial failed", "version", u.trial.Version, "reason", reason)
	if err := u.rollBack(reason); err != nil {
		u.log.Error("rollback failed", "err", err)
		return
	}
	u.onTrial = false
	if err := u.handOverOrSelf(); err != nil {
		u.log.Error("starting the restored firmware", "err", err)
	}
}

// handOverOrSelf starts the restored image, or the launcher binary when no
// image is installed any more.
func (u *Updater) handOverOrSelf() error {
	cur := u.o.Store.Path(node.FirmwareCurrent)
	if _, err := os.Stat(cur); err == nil {
		return u.o.Exec(cur, u.argv(cur), u.o.Env)
	}
	return u.o.Exec(u.launcher, u.argv(u.launcher), u.o.Env)
}

// rollBack restores the previous image and closes the trial.
func (u *Updater) rollBack(reason string) error {
	st := u.o.Store
	restored, ok, err := st.RollBackFirmware(reason, u.o.Clock.Now().UTC().Format(time.RFC3339))
	if err != nil {
		return fmt.Errorf("selfupdate: rolling back: %w", err)
	}
	if err := persist.Remove(st.Path(trialFile)); err != nil {
		return err
	}
	if ok {
		u.log.Warn("firmware rolled back", "to", restored.Version, "reason", reason)
	} else {
		u.log.Warn("firmware rolled back to the flashed binary", "binary", u.o.Executable, "reason", reason)
	}
	return nil
}

func (u *Updater) loadTrial() (Trial, bool, error) {
	var t Trial
	data, err := os.ReadFile(u.o.Store.Path(trialFile))
	if errors.Is(err, os.ErrNotExist) {
		return t, false, nil
	}
	if err != nil {
		return t, true, err
	}
	// A null or empty record is as unreadable as a torn one: the trial
	// is taken as failed.
	if err := persist.DecodeYAML(data, &t); err != nil {
		return Trial{}, true, fmt.Errorf("%s: %w", trialFile, err)
	}
	return t, true, nil
}

// runningCurrent reports whether the running binary is current.img.
func (u *Updater) runningCurrent() bool {
	a, err1 := os.Stat(u.o.Executable)
	b, err2 := os.Stat(u.o.Store.Path(node.FirmwareCurrent))
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// argv is the next image's argument list: the same flags, with argv[0]
// naming the image so that ps and logs show what runs.
func (u *Updater) argv(path string) []string {
	argv := append([]string(nil), u.o.Args...)
	if len(argv) == 0 {
		return []string{path}
	}
	argv[0] = path
	return argv
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

func withoutEnv(env []string, key string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

var _ node.Updater = (*Updater)(nil)
