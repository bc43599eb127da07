// Package plot holds the visualizer's scrolling signals: a Series keeps the
// last Window seconds of (time, value) samples, and Axes maps a series to a
// rectangle of pixels with round-numbered ticks so the time scale and the
// values can be labelled. No drawing code: viz/app draws what it returns.
package plot
