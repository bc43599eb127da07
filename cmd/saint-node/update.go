package main

import (
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/node/selfupdate"
)

// selfUpdate is the node's firmware self-update (node/selfupdate): its
// flags, and once booted the updater the node applies images with.
type selfUpdate struct {
	enabled       *bool
	healthyAfter  *time.Duration
	trialTimeout  *time.Duration
	rollbackCheck *bool
	updater       *selfupdate.Updater
}

// addSelfUpdateFlags registers the self-update flags on the command line.
func addSelfUpdateFlags() *selfUpdate {
	s := &selfUpdate{
		enabled:       flag.Bool("self-update", true, "install downloaded firmware by replacing this binary (false: simulate the update in-process)"),
		healthyAfter:  flag.Duration("healthy-after", selfupdate.DefaultHealthyAfter, "a new firmware image is kept once the node has been UNADOPTED or ACTIVE this long"),
		trialTimeout:  flag.Duration("trial-timeout", selfupdate.DefaultTrialTimeout, "a new firmware image not healthy within this time is rolled back"),
		rollbackCheck: flag.Bool("rollback-check", false, "roll back a firmware image that failed its trial, then exit (the service's pre-start hook)"),
	}
	return s
}

// boot runs before anything else: it rolls back a failed image and hands
// over to the installed one (exec, not returning) when that is not this
// binary. done is true when the command has nothing more to do
// (--rollback-check).
// exec, when not nil, replaces syscall.Exec for the images it starts.
func (s *selfUpdate) boot(stateDir, version string, log *slog.Logger, exec selfupdate.ExecFunc) (done bool, err error) {
	if !*s.enabled && !*s.rollbackCheck {
		return false, nil
	}
	store, err := node.NewStore(stateDir)
	if err != nil {
		return false, err
	}
	u, err := selfupdate.New(selfupdate.Options{
		Store: store, Version: version, Log: log,
		HealthyAfter: *s.healthyAfter, TrialTimeout: *s.trialTimeout, Exec: exec,
	})
	if err != nil {
		return false, err
	}
	if *s.rollbackCheck {
		rolled, err := u.CheckTrial()
		if err == nil && rolled {
			fmt.Println("saint-node: rolled back a firmware image that failed its trial")
		}
		return true, err
	}
	if err := u.Boot(); err != nil {
		return false, err
	}
	s.updater = u
	return false, nil
}

// nodeUpdater is the node's Updater: nil (simulated in-process) when self
// update is off.
func (s *selfUpdate) nodeUpdater() node.Updater {
	if s.updater == nil {
		return nil
	}
	return s.updater
}

// watch starts the health check of an image on trial.
func (s *selfUpdate) watch(ex *executor.Executor, n *node.Node) {
	if s.updater != nil {
		s.updater.Watch(ex, n.State)
	}
}
