// Package deploy holds what puts SAINT.OS on a Raspberry Pi cluster, and
// the tests that keep it working (docs/deploy.md is the step by step):
//
//	systemd/saint-server.service   the server, hardened, port 80 without root
//	systemd/saint-node.service     a node: device access by group, the
//	                               firmware rollback hook before each start,
//	                               the watchdog (Type=notify, WatchdogSec)
//	                               and the safe-outputs step after each stop
//	systemd/saint-watchdog.conf    systemd feeds the hardware watchdog
//	systemd/saint-ros2.service     the ROS 2 bridge beside the server, DDS on
//	                               the internal network only
//	scripts/deploy_server.sh       install the server, dnsmasq, the internal
//	                               address and the firmware tree over ssh;
//	                               --with-ros2 also the ROS 2 bridge
//	scripts/flash_node.sh          provision a Pi as a node over ssh
//	scripts/can-up.sh              bring up CAN interfaces before a node starts
//	dnsmasq/saint-internal.conf.in DHCP and DNS for 192.168.10.0/24
//	polkit/50-saint-power.rules    the server's shutdown and reboot commands
//
// The package has no Go code: its tests run shellcheck on every script
// (make test installs it; skipped, saying so, when it is missing), systemd-analyze
// verify on the units when it is available, check the units' restart,
// rollback and device settings, and run the scripts in dry-run mode
// (SAINT_DRY_RUN=1) to check the commands and configuration they produce.
package deploy
