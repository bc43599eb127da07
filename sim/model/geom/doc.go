// Package geom is the small amount of 3-D geometry the physics models need:
// vectors, rotation matrices and capsules (a segment with a radius), with
// the segment-to-segment distance used for collision detection. Frames are
// right-handed with x forward, y left and z up, as in ROS (REP 103).
package geom
