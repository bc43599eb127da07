// Package app is the visualizer's window, the only package of viz that
// imports ebiten: it reads state updates from server/ws/wsclient into
// viz/scene on ebiten's update loop (60 ticks a second), turns held keys into commands
// with viz/teleop, and draws each view in the rectangle viz/layout gives
// it. Importing it needs cgo and the X11/GL headers, and a program that
// links it panics at start without a display (ebiten initialises its
// window system in init), so it has no tests of its own: cmd/e2e runs
// saint-viz under xvfb-run and checks its screenshot.
package app
