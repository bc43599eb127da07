// Package client is a WebSocket API client (docs/api.md) for the
// visualizer: it authenticates with the API token (the Authorization
// header, which the server checks before the upgrade), subscribes to state
// topics, delivers state updates on a channel and sends robot-control
// commands without waiting for their answers, keeping the last error one
// returned so the window can show it.
package client
