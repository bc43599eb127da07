// Package camera is the simulator's head camera: a hal/camera.Camera that
// renders what a camera fixed in the robot's head would see of a simple
// scene, from the head's pan, tilt and roll as the physics has them.
//
// The scene is a flat floor with a 1 m grid of dark lines on grey, a sky that
// lightens towards the horizon, and a few coloured boxes standing on the
// floor around the robot as landmarks (red ahead, green to the left, blue
// behind, yellow to the right). The camera is a pinhole with the Raspberry
// Pi camera module v2's 62.2° horizontal field of view, looking along the
// head's x axis, mounted forward of and above the head's axes; a ray is cast
// through every pixel, tested only against the boxes whose projection can
// hold it (a box behind the camera is skipped outright), which keeps a
// 640×480 frame to a few milliseconds of one core. Rendering depends only on
// the pose, so frames are deterministic.
//
// Frames are produced on the executor Open is given, one per frame period,
// stamped with the executor's time; the pose is read when the frame is
// rendered. While the pose stays exactly the same, a frame is a copy of the
// last one rendered.
//
// Axes follow the head model (sim/model/head): x forward, y left, z up;
// the head's orientation is Rz(pan)·Ry(tilt)·Rx(roll), positive tilt looks
// down. The image's columns run to the camera's right (head −y), its rows
// downwards (head −z).
package camera
