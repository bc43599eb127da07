// Package wsclient is the one WebSocket API client (docs/api.md): saintctl,
// the visualizer and the tests use it. It authenticates with the API token
// (the Authorization header, which the server checks before the upgrade),
// calls actions and waits for their answers (Call), sends robot-control
// commands without waiting (Command, keeping the last error one returned
// so a window can show it), subscribes to state topics and delivers their
// updates on a channel. Package wsclienttest wraps it for tests.
package wsclient
