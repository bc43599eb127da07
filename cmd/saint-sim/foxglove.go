package main

import (
	"context"
	"log/slog"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/foxglove"
)

// startFoxglove serves the Foxglove WebSocket protocol on addr for srv's
// bus, behind srv's API token, with srv's commands and management calls.
// An empty addr serves nothing and returns a nil server.
func startFoxglove(addr string, srv *server.Server, b bus.Bus, ex *executor.Executor, log *slog.Logger) (*foxglove.Server, string, error) {
	if addr == "" {
		return nil, "", nil
	}
	fg, err := foxglove.New(foxglove.Options{Bus: b, Exec: ex, Gateway: srv.Gateway(), Auth: srv.Authenticator(),
		Name: "saint-sim " + version, Log: srv.Log()})
	if err != nil {
		return nil, "", err
	}
	if err := fg.Start(context.Background()); err != nil {
		return nil, "", err
	}
	bound, err := fg.Listen(addr)
	if err != nil {
		fg.Shutdown()
		return nil, "", err
	}
	log.Info("Foxglove: open a Foxglove WebSocket connection", "url", "ws://"+displayAddr(bound))
	return fg, bound, nil
}
