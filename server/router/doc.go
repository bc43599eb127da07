// Package router is the server's Input/Output Router: it maps input
// sources (the RC transmitter, WebSocket commands, Unreal LiveLink, a
// joystick, autonomous behaviours, safety monitors) to
// the robot's outputs (the head, arm, gripper and track command topics)
// through configurable routes, decides between sources by priority, blends
// hand-overs, and stops all motion on an emergency stop.
//
// # Routes
//
// A Route, in YAML or JSON (docs/router.md), has id, enabled, priority,
// input {source, subject, type, protocol, command_types}, output {target}
// and a mapping list (Map: from, to, scale, offset, clamp, deadzone, curve,
// expo, mode, threshold, inverted) or "passthrough". Config is a file of routes with
// its blending settings; the presets of config/routes/ (fixtures) are
// Configs. Validate errors are *FieldError naming the field at fault
// ("routes[1].mapping[0].clamp").
//
// # Running it
//
// The router lives on the server's executor and owns no goroutine but a
// waiting one per head camera holder that can go away (below). The
// server registers it as a feature (Register: the router as a component,
// its commands and the "router" topic); on its own it runs as
//
//	rt, err := router.New(router.Options{Exec: ex, Bus: b, DataDir: dataDir})
//	// on the executor:
//	err = rt.Start()          // subscribes to the input topics, starts the tick
//	// from any goroutine, before clients connect:
//	rt.RegisterCommands(gateway)
//	// on shutdown, on the executor:
//	rt.Stop()
//
// New reads DataDir/routes/ (active.yaml and presets/), seeding it from
// the shipped presets at the first start, so it does file I/O: call it
// before the executor runs the router, not from a callback.
//
// # Inputs
//
// Every source reaches the router as an Input. Submit(Input) routes one;
// it must be called on the executor (a Sink). Other goroutines call
// Post(Input), which posts Submit to the executor. Inputs also arrive on
// the bus, decoded on the executor: msg.RCReceiverState on
// msg.TopicRCState (each channel N is the property msg.RCChannelProperty(N),
// "channel_N", its normalised value), msg.LiveLinkFrame on
// msg.TopicLiveLinkFrames (each property by name), and msg.RouterInput on
// msg.TopicRouterInput (any other source: joystick bridges, ROS,
// autonomous behaviours, safety monitors, the RC receiver's failsafe). The
// console's msg.ConsoleOverride on msg.TopicConsoleOverride outranks every
// route but safety ones.
//
// # The head camera
//
// The head camera is shared by its holders: whoever sent a camera command
// with enable 1 (Input.Holder, or the Source for a source that is one
// party: a WebSocket client, the Foxglove server, ros2) and has not sent
// enable 0. The head is told on at every claim and off only when the last
// holder lets go; a WebSocket client that disconnects (ws.CallerOf's Done)
// lets go by itself, and a held camera found off when the head comes back
// is turned on again (CameraHolders, docs/api.md "The head camera").
//
// # Outputs
//
// Targets() is the table of output targets: per target (head, arms.left,
// arms.right, arms.left.pose, arms.right.pose, tracks, balance, console)
// its properties with units, limits and defaults, its bus topics and
// message types, and how its values become those messages. Routes, the
// WebSocket commands' limits, the preview, the e-stop topics and the web
// UI's route editor (get_targets) read it. Between the edges a target's
// values are Values, per property in the property's unit, because
// priorities and blending work property by property: a command's
// parameters are read straight into the target's properties and checked
// against their limits, and the target's encoder turns the values it is
// sent into its typed messages (a head move's pan is the HeadCommand's
// pan, in degrees, all the way). Every tick (Options.TickHz, default
// 50 Hz) each routable target with an active route is sent its values:
// msg.HeadCommand on /saint/head/cmd, msg.ArmCommand on
// /saint/arms/{side}/cmd and msg.GripperCommand on
// /saint/arms/{side}/gripper/cmd, msg.Twist on /saint/tracks/cmd_vel. The
// arms' pose targets send an ArmCommand too: the joint angles that put the
// gripper at the pose they are given, from the arms' inverse kinematics
// (package kinematics, with each arm's limits and supports_kinematics from
// Options.Arms), solved again every tick. A WebSocket command is also sent
// at once. When a target with stop values (the tracks) loses its last
// route it is sent them. RouteStatus goes to /saint/router/status when it
// changes, checked at most 20 times a second (an e-stop at once), and once
// a second.
//
// # Safety
//
// An emergency stop (Command "estop", a mapping to "estop", the WebSocket
// tracks estop and system estop, the console's estop control, EStop)
// publishes msg.EStop on every target's e-stop topic (/saint/tracks/estop,
// /saint/balance/estop) and the stop values of the targets that have them
// (a zero Twist) at once, keeps those at their stop values and holds the
// others' commands back until ClearEStop, whatever the priorities.
//
// See docs/router.md for the formats, the blending modes, the state
// machine and the WebSocket commands with examples.
package router
