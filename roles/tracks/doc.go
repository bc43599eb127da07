// Package tracks is the tracks role: differential drive of two tracks from
// cmd_vel with each track's speed closed on its encoder, odometry, a
// latched emergency stop (coast or brake) and the supply's low-voltage
// cutoff. See Tracks and docs/roles/tracks.md.
package tracks
