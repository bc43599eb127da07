// Package rpicam is a camera.Camera for a Raspberry Pi's CSI camera on
// current Raspberry Pi OS, where the camera stack is libcamera and the
// legacy V4L2 path is gone: it runs the OS's own rpicam-vid, which streams
// MJPEG to its standard output (rpicam-vid --codec mjpeg -o -), splits the
// stream into its JPEG pictures by their markers, decodes them to RGB and
// hands them to the receiver on its executor.
//
// A machine without rpicam-vid gets a clear error from Open naming the
// package to install (rpicam-apps). Frames are stamped with the wall
// clock as they are read: this is an I/O edge. A process that exits while
// streaming ends the stream; Err says why.
package rpicam
