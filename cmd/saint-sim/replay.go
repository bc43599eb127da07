package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server"
)

type replayOptions struct {
	file, dataDir, configDir, httpAddr, wsAddr, addrFile, foxglove string
	origins                                                        []string
	speed                                                          float64
	requireAuth                                                    bool
	log                                                            *slog.Logger
}

// runReplay serves a recording instead of a simulated robot: the server
// (web UI, WebSocket API) on the in-process bus, and the recording played
// onto that bus at its recorded pace on a virtual clock running at
// o.speed. It runs until interrupted; the end of the recording is logged.
func runReplay(o replayOptions) error {
	// Read the summary first: a file that is not a recording at all
	// fails here, before anything listens.
	sum, err := record.Summarize(o.file)
	if sum.Messages == 0 {
		if err == nil {
			err = fmt.Errorf("%s has no messages", o.file)
		}
		return fmt.Errorf("--replay: %w", err)
	}
	start := clock.Epoch()
	if !sum.Start.IsZero() {
		start = sum.Start
	}
	ex := executor.New(&executor.Options{Clock: clock.NewVirtual(start), Speed: o.speed})
	broker := mem.NewBroker()
	srv, err := server.New(server.Options{
		Bus: broker.Connect(nil), Exec: ex, ConfigDir: o.configDir, DataDir: filepath.Join(o.dataDir, "server"),
		HTTPAddr: o.httpAddr, WSAddr: o.wsAddr, FoxgloveAddr: o.foxglove, AllowedOrigins: o.origins, Log: o.log, NoAuth: !o.requireAuth, Version: version,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exCtx, stopExec := context.WithCancel(context.Background())
	defer stopExec()
	runErr := make(chan error, 1)
	go func() { runErr <- ex.Run(exCtx) }()
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Shutdown()

	var perr error
	if err := ex.Do(ctx, func() {
		_, perr = record.Replay(record.ReplayOptions{Bus: broker.Connect(nil), Exec: ex, File: o.file, Log: o.log,
			Done: func(s record.Summary, err error) {
				o.log.Info("replay finished; still serving (Ctrl-C to stop)", "file", o.file, "messages", s.Messages, "err", err)
			}})
	}); err != nil {
		return err
	}
	if perr != nil {
		return fmt.Errorf("--replay: %w", perr)
	}
	addrs := srv.Addrs()
	if o.addrFile != "" {
		data, _ := json.Marshal(addrs)
		if err := persist.WriteFile(o.addrFile, data, 0o644); err != nil {
			return err
		}
	}
	o.log.Info("SAINT.OS replay running", "file", o.file, "messages", sum.Messages, "duration", sum.Duration(),
		"web", "http://"+displayAddr(addrs["http"]), "websocket", "ws://"+displayAddr(addrs["ws"])+"/saint", "speed", o.speed)
	select {
	case <-ctx.Done():
	case err := <-runErr:
		return err
	}
	o.log.Info("shutting down")
	return nil
}
