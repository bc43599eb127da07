// Package cyclone is the bridge's DDS edge: a participant of Eclipse
// Cyclone DDS (Debian cyclonedds-dev 0.10.2, the version ROS 2 Humble's
// rmw_cyclonedds_cpp uses) that writes and takes samples of the ROS 2
// interfaces as serialized XCDR1 bytes, so that the rest of the bridge
// stays pure Go and type-agnostic.
//
// Types are found by their DDS name ("nav_msgs::msg::dds_::Odometry_")
// among the topic descriptors idlc generated into this folder from
// ros2/idl (go generate ./ros2). A write checks the bytes against the
// type's descriptor (dds_stream_normalize_data) before turning them into
// a sample, so malformed bytes are refused rather than read out of
// bounds.
//
// The types carry no XTypes type information (idlc -t): endpoints match
// remote ones by type name, as rmw_cyclonedds_cpp's do, and the
// participant never asks a peer for its type object. Cyclone DDS 0.10
// crashes resolving a type object with XTypes 1.3's int8/uint8 kinds
// (eclipse-cyclonedds#1554), which newer DDS implementations write for
// ROS 2's int8, uint8 and byte fields; and since 0.10 takes a TypeLookup
// reply for any type a peer announced, asked for or not, typeguard.c
// stands in for libddsc's ddsi_type_add_typeobj and refuses such objects,
// logging the participants that announced the type. NewParticipant fails
// when the guard is not in place.
//
// The participant is a ROS 2 participant to ROS 2's graph tools: its
// USER_DATA is "enclave=/;" (UserData), and AnnounceNode publishes on
// ros_discovery_info the node it holds with the GIDs of its readers and
// writers, as rmw_cyclonedds_cpp does (Humble's 24-byte Gid: the
// endpoint's GUID, zero-padded).
//
// Configuration is Cyclone's own: CYCLONEDDS_URI (network interface,
// multicast, peers) is read by Cyclone when the first participant is
// created, as it is for every ROS 2 process using rmw_cyclonedds_cpp.
//
// This is the only package of SAINT.OS that links C (cgo); only the
// saint-ros2 command imports it.
package cyclone
