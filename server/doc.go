// Package server is saint-server: the robot's coordinator. It is wiring:
// New opens the stores the features share (settings, the activity log,
// the API token, the firmware repository, the adoption registry), makes
// the WebSocket gateway and a feature.Host over the executor and the bus,
// and calls each feature's Register:
//
//   - adoption: the management commands on nodes;
//   - firmware: the firmware bus services and /api/firmware;
//   - activity: get_activity_log, the "logs" topic and /api/logs;
//   - telemetry: the robot's state topics (head, arms, tracks, ...);
//   - balance: the balancing base's console command;
//   - inputs/livelink: the LiveLink receiver and its status command;
//   - router: the input/output router, its commands and its topic;
//   - inputs/rc: the RC receiver, its configuration file and commands;
//   - system: the system status, shutdown and reboot;
//   - admin: settings, the API token and the client list.
//
// Start starts the features' components on the executor in that order
// and opens the listeners (the web UI, /api/ws and the routes features
// added; the WebSocket API at /saint; the firmware tree for nodes);
// Shutdown closes them and stops the components in reverse order. The
// logic runs on an executor, so the same server runs on a robot's wall
// clock and inside the simulator's virtual time.
//
// Authentication is on unless Options.NoAuth says otherwise, and a server
// without it refuses to listen beyond loopback.
package server
