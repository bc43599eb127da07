// Package layout places the visualizer's views in a window of any size and
// maps the arena's world metres to pixels. It has no drawing code, so the
// window (viz/app) and the tests that read its screenshots compute the
// same rectangles and the same pixel for a pose.
package layout
