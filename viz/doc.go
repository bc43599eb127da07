// Package viz is the desktop visualizer's home: saint-viz (and saint-sim
// --viz) shows the robot as the WebSocket API reports it — the tracked
// base's pose from the simulator's ground truth next to its odometry, the
// balancing base, the arms, the head, the console's screen, scrolling plots,
// node status and routes — and drives it from the keyboard like any other
// API client.
//
// Only viz/app imports ebiten (it needs cgo, X11/GL headers and a display).
// Everything it draws is decided by packages that do not:
// server/ws/wsclient (the WebSocket client), viz/scene (the robot's state and kinematics, fed by
// state updates), viz/layout (where each view goes in a window of any
// size, and the arena's metres-to-pixels mapping), viz/plot (the plots'
// time windows and axes) and viz/teleop (keys to API commands), so those
// are unit-tested anywhere and the end-to-end test maps the simulator's
// ground truth to screen pixels with the same code the window uses.
package viz
