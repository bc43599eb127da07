// Package balance is the server's side of the balancing base: the
// WebSocket commands "balance console", which forwards one line of the
// base's debug console to the balance role's bus service and answers with
// its output, and "balance arm" / "balance disarm", the console's arm and
// disarm with the base's verdict. Driving the base is the router's
// ("balance drive", "balance stop").
package balance
