// Package foxglove is a server of the Foxglove WebSocket protocol
// (subprotocol "foxglove.websocket.v1"), so Foxglove shows the live robot:
// every bus topic is a channel, advertised when it first carries a message,
// with the same encoding and schema a recording gives it (package record:
// "cdr" with a "ros2msg" schema for topics with a ROS 2 type, such as
// nav_msgs/msg/Odometry, so Foxglove's panels recognise them; "json" with
// a JSON Schema for the rest).
//
// # What a client gets
//
//   - serverInfo on connection, with the capabilities clientPublish, time
//     and services, and the supported encoding "json" (for client publish);
//   - advertise for every channel known, and for each new one as it
//     appears; the on-demand topics (Options.OnDemand: the head camera)
//     are advertised from the start, and subscribing to one starts its
//     messages (the "head camera" command, repeated while the topic
//     stays silent) until its last subscriber leaves, the server holding
//     the camera as "foxglove" beside its other holders (the router counts
//     them); their messages are encoded off the executor, newest first,
//     and a camera frame published in process is taken as a copy of its
//     value (bus.SubscribeValuesOfWanted) and encoded into CDR without
//     JSON, and only while a client subscribes to its channel: otherwise
//     the frame is dropped on the publisher's side, before any copy;
//   - message data (binary opcode 1) for its subscriptions, stamped with
//     the executor's clock, and time (binary opcode 2) every
//     Options.TimeInterval, so under the simulator's virtual clock
//     Foxglove's timeline is simulated time;
//   - services: the management calls that need no connection of their own
//     (list_adopted, adopt_node, router get_status, record_start ...), as
//     "/saint/<type>/<action>", with JSON requests and responses.
//   - parameters (Options.Params): the server's settings, the adopted
//     nodes' display names, the router's blending and the RC receiver's
//     failsafe, protocol and switch, named
//     "/<node>.<parameter>" as in ROS 2 ("/server.livelink.data_port",
//     "/head.display_name", "/router.blending.mode"), read and set with
//     the WebSocket API's own calls (get_settings and set_settings ...),
//     so a set is checked and stored as the web UI's is; subscribers
//     hear of changes from any source, read again every
//     Options.ParamInterval while someone is subscribed.
//
// # Client publish
//
// A client advertises a channel on "/saint/command/<target>/<action>"
// (for example "/saint/command/head/move") with encoding "json" — the
// robot-control commands: head move, home and camera; arms move, home and
// gripper; tracks drive, stop and estop; system estop — and each
// message it publishes there is that WebSocket API command's params
// ({"pan": 30}). The command runs through the WebSocket gateway's own
// handler, so it is checked the same way and enters the router as a
// WebSocket command, with that source's priority, under the e-stop.
//
// A client may advertise other topics too (Foxglove's 3D panel advertises
// /clicked_point and others of its own); what it publishes there is
// refused with a status message.
//
// # Bad input
//
// A subscription to an unknown channel, a publish on a channel the client
// did not advertise, a malformed binary frame, JSON that is not a command's
// params, or a command the handler rejects: each is answered with a status
// message (level error) naming what was wrong; the connection stays open
// and nothing moves. A parameter value its setting's call refuses is
// answered the same way, naming the parameter, and changes nothing.
//
// # Access
//
// The server sits behind the WebSocket API's token: "Authorization: Bearer
// TOKEN" on the upgrade request, or "?token=TOKEN" in the URL (the Foxglove
// app cannot set headers). Browser origins other than Foxglove's own and
// Options.AllowedOrigins are refused. When the token changes, clients of
// the old one are refused and disconnected.
package foxglove
