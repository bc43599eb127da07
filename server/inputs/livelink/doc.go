// Package livelink is the server's LiveLink receiver: where face capture
// apps and animation tools meet the router.
//
// It speaks two protocols. The Live Link Face app (ARKit mode) sends one
// UDP datagram per captured frame, big-endian, with 61 blend shape weights
// and the head and eye rotations (ParseFacePacket); SAINT's own LiveLink
// JSON frames carry animation, transform, face and camera subjects over a
// TCP data port, one JSON object per line (DecodeJSONFrame), and sources
// find the server through discovery beacons on UDP (Beacon).
//
// Frames are taken only from senders on an allow-list of source addresses
// (Senders), kept in the server's data directory; frames from other
// senders are dropped, counted, and their senders listed for the
// administrator to allow. Every frame taken becomes a msg.LiveLinkFrame
// on msg.TopicLiveLinkFrames, which the router turns into input, and
// updates the Registry of subjects behind the router's
// list_livelink_sources and get_livelink_subject commands.
// Sockets are read by goroutines at the edge; everything else runs on the
// server's executor and takes its time from it. Register installs the
// receiver as a server feature (Feature): it follows the livelink
// settings, restarting on new ports, and answers livelink get_status,
// list_senders, allow_sender and revoke_sender.
// docs/livelink.md describes the wire formats byte for byte.
package livelink
