// Package server is saint-server: the robot's coordinator (spec: Main Server
// Node). It holds the adoption manager (package adoption), the firmware
// repository (package firmware), the input/output router (package router)
// and the WebSocket gateway (package ws) with the spec's robot-control,
// system, management, router and RC commands; it keeps the settings
// (package settings), the activity log (package activity) and the API token
// (package auth), serves the web UI, /api/logs and /api/firmware, and talks
// to nodes over the bus. Its logic runs on an executor, so the same server
// runs on a robot's wall clock and inside the simulator's virtual time.
//
// Authentication is on unless Options.NoAuth says otherwise, and a server
// without it refuses to listen beyond loopback.
package server
