#!/bin/sh
# can-up.sh brings up the CAN interfaces a node uses, before saint-node
# starts (ExecStartPre=! in saint-node.service: it runs as root holding only
# CAP_NET_ADMIN, the node runs as saint with no capabilities). SAINT_CAN in /etc/default/saint-node lists them as
# IFACE:BITRATE, e.g. SAINT_CAN="can0:500000 can1:1000000". Nothing to do
# without it.
set -eu

# shellcheck disable=SC1091 # installed on the node, not in the checkout
[ -r /etc/default/saint-node ] && . /etc/default/saint-node
for spec in ${SAINT_CAN:-}; do
	iface=${spec%%:*}
	bitrate=${spec#*:}
	case $bitrate in
	'' | *[!0-9]*)
		echo "can-up: SAINT_CAN entry '$spec': want IFACE:BITRATE, e.g. can0:500000" >&2
		exit 1
		;;
	esac
	ip link set "$iface" down 2>/dev/null || true
	ip link set "$iface" type can bitrate "$bitrate" restart-ms 100
	ip link set "$iface" up
	echo "can-up: $iface up at $bitrate bit/s"
done
