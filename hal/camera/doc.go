// Package camera is the hardware abstraction for a video camera: open it at
// a resolution and frame rate, receive frames with their capture time, close
// it. The head role streams frames from a Camera without knowing whether a
// V4L2 device on a Raspberry Pi (hal/v4l2) or the simulator's renderer
// (sim/twin/camera) produces them.
//
// Frames are always delivered as packed 8-bit RGB (sensor_msgs "rgb8"):
// backends convert from what the hardware gives (YUYV, MJPEG) at the edge,
// so the code on the executor handles one format. The callback runs on the
// executor Open was given, so frame handling needs no locking.
//
// A board.Board has no camera in its Hardware: boards that carry one also
// implement Provider, which a role finds with a type assertion.
package camera
