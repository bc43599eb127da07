// Package balance is the server's side of the balancing base: the
// WebSocket command "balance console", which forwards one line of the
// base's debug console to the balance role's bus service and answers with
// its output.
package balance
