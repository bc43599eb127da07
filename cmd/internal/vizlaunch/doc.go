// Package vizlaunch opens the visualizer on a running simulation (saint-sim
// --viz). It does not import ebiten — a program that links ebiten cannot
// start without a display, and saint-sim must — so it runs saint-viz as a
// child process attached to the simulation's WebSocket API, and it
// publishes what only the simulation can see: the console's SSD1306
// display RAM, read from the console board's display twin, on
// ConsoleBusTopic, which the server forwards as the "console" topic.
package vizlaunch
