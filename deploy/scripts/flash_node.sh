#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# flash_node.sh provisions a Raspberry Pi as a SAINT.OS node over ssh: it
# installs the published node firmware as /usr/local/bin/saint-node, the
# saint-node service with its rollback hook, watchdog and safe-outputs
# step, systemd's hardware watchdog, the device groups, I2C and SPI, and
# optional CAN interfaces. Before the node's first boot it enrols it: it
# makes the node's bus key, registers it with the server (saintctl nodes
# enrol, over the server's WebSocket API) and writes the key and the
# fingerprint of the server's bus CA to the node's /var/lib/saint, so the
# node connects only to that server and the server knows its key. The node
# then boots, checks the server for firmware and announces itself
# unadopted; adopt it in the web UI, where it is marked enrolled.
#
#   deploy/scripts/flash_node.sh --host pi@192.168.10.23 [options]
#
# Options:
#   --host USER@HOST     the node Pi (required; the user needs sudo)
#   --image FILE         node image (default firmware/current/saint_node.img,
#                        checked against its .sha256)
#   --server URL         the server's NATS URL (default nats://192.168.10.1:4222)
#   --release-key FILE   the release public key (saintctl firmware keygen's .pub) the
#                        node trusts for updates besides the one built into the
#                        image (default: saint-release.pub in the key directory,
#                        $SAINT_KEY_DIR or ~/.config/saint/keys, when it is there);
#                        installed as /etc/saint/saint-release.pub
#   --key-dir DIR        the key directory deploy_server.sh keeps the release key in
#   --can IFACE:BITRATE  bring up a CAN interface (repeatable), e.g. can0:500000
#   --args "ARGS"        extra saint-node arguments, e.g. "--reset-pin 21"
#   --pwm                turn on the two hardware PWM channels on GPIO12 and
#                        GPIO13 (dtoverlay=pwm-2chan in config.txt, Pi 4 and
#                        Pi 5; the head node); reboot the node afterwards
#   --factory            forget the node's role and installed firmware
# Enrolment:
#   --id ID              the node's id (default: read from the Pi, pi-<serial>)
#   --api URL            the server's WebSocket API (default
#                        ws://SERVER-HOST:9090/saint, the host of --server)
#   --token-file FILE    the server's API token (its DATA/api_token); default
#                        $SAINT_TOKEN
#   --ca-sha256 HEX      the server's bus CA fingerprint as saint-server logs
#                        it at start: nothing is enrolled if the server at
#                        --api has another
#   --trust-first-server do not enrol: the node pins the CA of the first
#                        server that answers (lab use only)
#
# SAINT_DRY_RUN=1 prints the commands instead of running them; SSH_OPTS
# passes options to ssh and scp; SAINTCTL is the saintctl command (default:
# saintctl on the PATH, else bin/saintctl, else built from this checkout).
# See docs/deploy.md.
set -eu

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# remote_read runs a shell command line on $TARGET and prints its output;
# a dry run prints the command on stderr and a placeholder.
remote_read() {
	if [ "${SAINT_DRY_RUN:-0}" = 1 ]; then
		printf 'remote %s: %s\n' "$TARGET" "$*" >&2
		echo serial
		return 0
	fi
	# shellcheck disable=SC2086 # SSH_OPTS is a list of options
	printf '%s\n' "$*" | ssh $SSH_OPTS "$TARGET" sudo sh -e
}

TARGET=
IMAGE=
SERVER=nats://192.168.10.1:4222
CAN=
NODE_ARGS=
FACTORY=0
PWM=0
RELEASE_KEY=
KEY_DIR=${SAINT_KEY_DIR:-}
SSH_OPTS=${SSH_OPTS:-}
NODE_ID=
API=
TOKEN_FILE=
CA_SHA256=
TRUST_FIRST=0

while [ $# -gt 0 ]; do
	case $1 in
	--host) TARGET=${2:?--host needs USER@HOST}; shift 2 ;;
	--image) IMAGE=${2:?--image needs a file}; shift 2 ;;
	--server) SERVER=${2:?--server needs a URL}; shift 2 ;;
	--can) CAN="$CAN ${2:?--can needs IFACE:BITRATE}"; shift 2 ;;
	--args) NODE_ARGS=${2?--args needs a value}; shift 2 ;;
	--factory) FACTORY=1; shift ;;
	--release-key) RELEASE_KEY=${2:?--release-key needs a file}; shift 2 ;;
	--key-dir) KEY_DIR=${2:?--key-dir needs a directory}; shift 2 ;;
	--pwm) PWM=1; shift ;;
	--id) NODE_ID=${2:?--id needs a node id}; shift 2 ;;
	--api) API=${2:?--api needs a URL}; shift 2 ;;
	--token-file) TOKEN_FILE=${2:?--token-file needs a file}; shift 2 ;;
	--ca-sha256) CA_SHA256=${2:?--ca-sha256 needs the fingerprint}; shift 2 ;;
	--trust-first-server) TRUST_FIRST=1; shift ;;
	-h | --help) sed -n '/^set -eu$/q;3,$p' "$0"; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[ -n "$TARGET" ] || die "--host USER@HOST is required"
case $SERVER in
nats://*) ;;
*) die "--server $SERVER: want nats://HOST:PORT" ;;
esac
for spec in $CAN; do
	case $spec in
	*:*[!0-9]* | *: | :*) die "--can $spec: want IFACE:BITRATE, e.g. can0:500000" ;;
	*:*) ;;
	*) die "--can $spec: want IFACE:BITRATE, e.g. can0:500000" ;;
	esac
done

case $NODE_ID in
*[!A-Za-z0-9_-]*) die "--id $NODE_ID: want letters, digits, '-' or '_'" ;;
esac
if [ -z "$API" ]; then
	host=${SERVER#nats://}
	API="ws://${host%:*}:9090/saint"
fi
case $API in
ws://* | wss://*) ;;
*) die "--api $API: want ws://HOST:PORT/saint" ;;
esac
if [ "$TRUST_FIRST" = 1 ]; then
	echo "flash_node.sh: WARNING: --trust-first-server: the node is not enrolled and pins the CA of the first server that answers, whoever runs it (lab use only)" >&2
	NODE_ARGS="--trust-first-server${NODE_ARGS:+ $NODE_ARGS}"
fi

ROOT=$(repo_root)
cd "$ROOT"
SAINTCTL=${SAINTCTL:-}
[ -n "$IMAGE" ] || IMAGE=firmware/current/saint_node.img
[ -r "$IMAGE" ] || die "$IMAGE not found: run make firmware first, or pass --image"
if [ -r "$IMAGE.sha256" ]; then
	want=$(cut -d' ' -f1 <"$IMAGE.sha256")
	got=$(sha256sum "$IMAGE" | cut -d' ' -f1)
	[ "$want" = "$got" ] || die "$IMAGE: sha256 $got does not match $IMAGE.sha256 ($want)"
fi

# The release key the node trusts. An image built with make firmware
# SIGN_KEY=... (deploy_server.sh builds so) has the key's public half built
# in, and its manifest names it; a release public key file is trusted
# besides. A node that trusts no key refuses every update.
if [ -z "$RELEASE_KEY" ]; then
	[ -n "$KEY_DIR" ] || KEY_DIR=${HOME:-/nonexistent}/.config/saint/keys
	[ ! -r "$KEY_DIR/saint-release.pub" ] || RELEASE_KEY=$KEY_DIR/saint-release.pub
else
	case $RELEASE_KEY in
	*.key) RELEASE_KEY=${RELEASE_KEY%.key}.pub ;;
	esac
	[ -r "$RELEASE_KEY" ] || die "--release-key $RELEASE_KEY: not readable (want saintctl firmware keygen's .pub)"
fi
if [ -n "$RELEASE_KEY" ]; then
	grep -Eq '^(ed25519:|-----BEGIN PUBLIC KEY-----)' "$RELEASE_KEY" || die "$RELEASE_KEY: not a release public key (ed25519:... or a PEM PUBLIC KEY)"
fi
BUILT_IN=
# The manifest beside an archived image, one level up for current/.
manifest=$(dirname "$IMAGE")/manifest.json
[ -r "$manifest" ] || manifest=$(dirname "$(dirname "$IMAGE")")/manifest.json
if [ -r "$manifest" ]; then
	BUILT_IN=$(sed -n 's/.*"signing_key": *"\(ed25519:[A-Za-z0-9+\/=]*\)".*/\1/p' "$manifest" | head -n 1)
	if [ -n "$BUILT_IN" ] && ! grep -qF "$BUILT_IN" "$IMAGE"; then
		BUILT_IN=
	fi
fi
if [ -n "$BUILT_IN" ]; then
	echo "$IMAGE trusts the release key $BUILT_IN (built in)"
elif [ -n "$RELEASE_KEY" ]; then
	echo "$IMAGE has no release key built in; the node will trust $RELEASE_KEY"
else
	echo "warning: $IMAGE has no release key built in and no --release-key was given: this node will refuse every firmware update. Build the image with make firmware SIGN_KEY=... (deploy_server.sh does) or pass --release-key (docs/deploy.md)." >&2
fi
if [ -n "$RELEASE_KEY" ]; then
	NODE_ARGS="--firmware-key /etc/saint/saint-release.pub${NODE_ARGS:+ $NODE_ARGS}"
fi

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
cat >"$STAGE/saint-node.env" <<ENV
# /etc/default/saint-node: settings of the saint-node service.
SAINT_SERVER=$SERVER
SAINT_NODE_ARGS="$NODE_ARGS"
SAINT_CAN="${CAN# }"
ENV
if [ "${SAINT_DRY_RUN:-0}" = 1 ]; then
	echo "/etc/default/saint-node:"
	sed 's/^/  | /' "$STAGE/saint-node.env"
fi

# Enrolment, before the node's first boot: its key and the server's CA.
ENROL_FILES=
if [ "$TRUST_FIRST" = 0 ]; then
	if [ -z "$NODE_ID" ]; then
		# The id the node takes from its board: pi-<SoC serial>.
		serial=$(remote_read "sed -n 's/^Serial[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo")
		[ -n "$serial" ] || die "$TARGET: no Serial in /proc/cpuinfo; give the node's id with --id"
		# Lower case, as the node's board takes it.
		NODE_ID=pi-$(printf '%s' "$serial" | tr 'A-F' 'a-f')
	fi
	if [ -z "$SAINTCTL" ]; then
		if command -v saintctl >/dev/null; then
			SAINTCTL=saintctl
		elif [ -x bin/saintctl ]; then
			SAINTCTL=$ROOT/bin/saintctl
		else
			SAINTCTL=$STAGE/saintctl
			run go build -o "$SAINTCTL" ./cmd/saintctl
		fi
	fi
	set -- --server "$API"
	[ -z "$TOKEN_FILE" ] || set -- "$@" --token-file "$TOKEN_FILE"
	set -- "$@" nodes enrol "$NODE_ID" --out "$STAGE/enrol"
	[ -z "$CA_SHA256" ] || set -- "$@" --ca-sha256 "$CA_SHA256"
	run "$SAINTCTL" "$@"
	ENROL_FILES="$STAGE/enrol/bus.nk $STAGE/enrol/bus-ca.sha256"
fi

REMOTE_STAGE=/tmp/saint-node-install
remote "rm -rf $REMOTE_STAGE && mkdir -p $REMOTE_STAGE && chown \$SUDO_USER $REMOTE_STAGE"
# shellcheck disable=SC2086 # ENROL_FILES is a list of paths without spaces
copy "$REMOTE_STAGE/" "$IMAGE" deploy/systemd/saint-node.service deploy/systemd/saint-watchdog.conf deploy/scripts/can-up.sh "$STAGE/saint-node.env" $ENROL_FILES
if [ -n "$RELEASE_KEY" ]; then
	cp "$RELEASE_KEY" "$STAGE/saint-release.pub"
	copy "$REMOTE_STAGE/" "$STAGE/saint-release.pub"
fi

# I2C and SPI on (Raspberry Pi OS); the groups the unit asks for.
remote "if command -v raspi-config >/dev/null; then raspi-config nonint do_i2c 0; raspi-config nonint do_spi 0; fi"
if [ "$PWM" = 1 ]; then
	# The overlay the node's sysfs PWM backend expects (docs/hardware.md).
	remote "c=/boot/firmware/config.txt; [ -f \$c ] || c=/boot/config.txt; grep -q '^dtoverlay=pwm-2chan' \$c || echo 'dtoverlay=pwm-2chan,pin=12,func=4,pin2=13,func2=4' >>\$c"
fi
remote "for g in gpio i2c spi dialout video; do getent group \$g >/dev/null || groupadd --system \$g; done"
remote "id saint >/dev/null 2>&1 || useradd --system --home-dir /var/lib/saint --shell /usr/sbin/nologin saint"
remote "usermod -a -G gpio,i2c,spi,dialout,video saint"
remote "systemctl stop saint-node 2>/dev/null || true"
remote "install -m 0755 $REMOTE_STAGE/$(basename "$IMAGE") /usr/local/bin/saint-node"
remote "install -D -m 0755 $REMOTE_STAGE/can-up.sh /usr/local/lib/saint/can-up.sh"
remote "install -m 0644 $REMOTE_STAGE/saint-node.service /etc/systemd/system/"
remote "install -m 0644 $REMOTE_STAGE/saint-node.env /etc/default/saint-node"
# systemd feeds the hardware watchdog (a hung kernel resets the Pi); the
# manager reads it at a re-exec (docs/deploy.md, "Watchdogs").
remote "install -D -m 0644 $REMOTE_STAGE/saint-watchdog.conf /etc/systemd/system.conf.d/saint-watchdog.conf && systemctl daemon-reexec"
if [ -n "$RELEASE_KEY" ]; then
	remote "install -D -m 0644 $REMOTE_STAGE/saint-release.pub /etc/saint/saint-release.pub"
fi
if [ -n "$ENROL_FILES" ]; then
	# The enrolment replaces any CA the node pinned before.
	remote "install -d -m 0750 -o saint -g saint /var/lib/saint && install -m 0600 -o saint -g saint $REMOTE_STAGE/bus.nk /var/lib/saint/bus.nk && install -m 0644 -o saint -g saint $REMOTE_STAGE/bus-ca.sha256 /var/lib/saint/bus-ca.sha256 && rm -f /var/lib/saint/bus-ca.pem"
fi
if [ "$FACTORY" = 1 ]; then
	remote "rm -rf /var/lib/saint/role.yaml /var/lib/saint/role_config.yaml /var/lib/saint/firmware"
fi
remote "systemctl daemon-reload && systemctl enable --now saint-node"
remote "rm -rf $REMOTE_STAGE"
echo "node provisioned on $TARGET: $(basename "$IMAGE") as /usr/local/bin/saint-node, server $SERVER."
if [ -n "$ENROL_FILES" ]; then
	echo "Enrolled as $NODE_ID: it connects only to the server at $API, which knows its key."
fi
echo "It announces itself unadopted within seconds: adopt it in the web UI (Nodes) or with saintctl adopt."
if [ "$PWM" = 1 ]; then
	echo "Hardware PWM takes effect after a reboot: ssh $TARGET sudo reboot"
fi
