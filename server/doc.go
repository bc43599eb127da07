// Package server is saint-server: the robot's coordinator (spec: Main Server
// Node). It holds the adoption manager (package adoption), the firmware
// repository (package firmware) and the WebSocket gateway (package ws) with
// the spec's management commands, serves the web UI, and talks to nodes
// over the bus. Its logic runs on an executor, so the same server runs on a
// robot's wall clock and inside the simulator's virtual time.
package server
