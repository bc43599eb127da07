#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# deploy_server.sh installs saint-server on the robot's server Pi over ssh:
# the arm64 commands, the node firmware tree, the systemd unit, dnsmasq for
# the internal network (DHCP and DNS on 192.168.10.0/24), the static
# internal address and the polkit rule for the power commands; with
# --with-ros2 also the ROS 2 bridge saint-ros2 and its unit.
#
#   deploy/scripts/deploy_server.sh --host pi@saint-server.local [options]
#
# Options:
#   --host USER@HOST     the server Pi (required; the user needs sudo)
#   --iface IFACE        internal Ethernet interface (default eth0)
#   --server-ip IP       the server's internal address (default 192.168.10.1)
#   --version V          version to build (default: the latest release tag, else 0.1.0)
#   --sign-key FILE      sign the firmware with this release key (saintctl firmware
#                        keygen's .key), imported into the key directory
#   --key-dir DIR        where the release key is kept (default $SAINT_KEY_DIR, else
#                        ~/.config/saint/keys: 0700, the key 0600); without one
#                        there, a new key is generated (saintctl firmware keygen)
#   --node-hosts FILE    dnsmasq dhcp-host lines for fixed node addresses
#   --skip-build         deploy what bin/linux-arm64 and firmware/ hold
#   --with-ros2          also install saint-ros2 (the ROS 2 bridge) and saint-ros2.service
#   --ros2-build HOW     how saint-ros2 is built, since it links Cyclone DDS (cgo):
#                        cross: here, with an arm64 C compiler and arm64 Cyclone DDS;
#                        pi: on the Pi, with its Go and cyclonedds-dev from apt;
#                        auto (default): cross when both are here, else pi
#   --ros2-cc CC         the arm64 C compiler for cross (default aarch64-linux-gnu-gcc)
#
# SAINT_DRY_RUN=1 prints the commands instead of running them; SSH_OPTS
# passes options to ssh and scp. See docs/deploy.md.
set -eu

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

TARGET=
IFACE=eth0
SERVER_IP=192.168.10.1
VERSION=
NODE_HOSTS=
SKIP_BUILD=0
SIGN_KEY=
KEY_DIR=${SAINT_KEY_DIR:-}
WITH_ROS2=0
ROS2_BUILD=auto
ROS2_CC=aarch64-linux-gnu-gcc
SSH_OPTS=${SSH_OPTS:-}

while [ $# -gt 0 ]; do
	case $1 in
	--host) TARGET=${2:?--host needs USER@HOST}; shift 2 ;;
	--iface) IFACE=${2:?--iface needs a name}; shift 2 ;;
	--server-ip) SERVER_IP=${2:?--server-ip needs an address}; shift 2 ;;
	--version) VERSION=${2:?--version needs a version}; shift 2 ;;
	--node-hosts) NODE_HOSTS=${2:?--node-hosts needs a file}; shift 2 ;;
	--skip-build) SKIP_BUILD=1; shift ;;
	--sign-key) SIGN_KEY=${2:?--sign-key needs a file}; shift 2 ;;
	--key-dir) KEY_DIR=${2:?--key-dir needs a directory}; shift 2 ;;
	--with-ros2) WITH_ROS2=1; shift ;;
	--ros2-build) ROS2_BUILD=${2:?--ros2-build needs auto, cross or pi}; shift 2 ;;
	--ros2-cc) ROS2_CC=${2:?--ros2-cc needs a C compiler}; shift 2 ;;
	-h | --help) sed -n '/^set -eu$/q;3,$p' "$0"; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[ -n "$TARGET" ] || die "--host USER@HOST is required"
case $ROS2_BUILD in
auto | cross | pi) ;;
*) die "--ros2-build $ROS2_BUILD: want auto, cross or pi" ;;
esac
case $SERVER_IP in
192.168.10.*) ;;
*) echo "warning: --server-ip $SERVER_IP is outside the internal network 192.168.10.0/24" >&2 ;;
esac

[ -n "$KEY_DIR" ] || KEY_DIR=${HOME:?HOME is not set: pass --key-dir}/.config/saint/keys
case $KEY_DIR in
/*) ;;
*) KEY_DIR=$(pwd)/$KEY_DIR ;;
esac
case $SIGN_KEY in
'' | /*) ;;
*) SIGN_KEY=$(pwd)/$SIGN_KEY ;;
esac

ROOT=$(repo_root)
cd "$ROOT"
if [ -z "$VERSION" ]; then
	# The latest release tag, else 0.1.0: firmware versions are compared as
	# dotted numbers, so a commit hash will not do.
	VERSION=$(git describe --tags --abbrev=0 2>/dev/null | sed 's/^v//') || true
	echo "$VERSION" | grep -Eq '^[0-9]+(\.[0-9]+)+$' || VERSION=0.1.0
fi
echo "$VERSION" | grep -Eq '^[0-9]+(\.[0-9]+)+$' || die "--version $VERSION: want dotted numbers such as 1.2.0"
BIN=bin/linux-arm64

# cross_ros2_ready says whether $ROS2_CC can build and link arm64 code
# against Cyclone DDS: the compiler, dds/dds.h and an arm64 libddsc (Debian:
# gcc-aarch64-linux-gnu and cyclonedds-dev:arm64 from the arm64 architecture).
cross_ros2_ready() {
	command -v "$ROS2_CC" >/dev/null 2>&1 || return 1
	printf '#include <dds/dds.h>\n' | "$ROS2_CC" -E -x c - >/dev/null 2>&1 || return 1
	lib=$("$ROS2_CC" -print-file-name=libddsc.so 2>/dev/null) || return 1
	case $lib in
	/*) [ -e "$lib" ] ;;
	*) return 1 ;;
	esac
}

# saint-ros2 links Cyclone DDS (cgo), so it is not one of the static
# commands: it is cross-compiled here when an arm64 toolchain with arm64
# Cyclone DDS is installed, otherwise built on the Pi.
ROS2_HOW=
if [ "$WITH_ROS2" = 1 ]; then
	case $ROS2_BUILD in
	cross)
		if [ "$SKIP_BUILD" = 1 ]; then
			[ -x "$BIN/saint-ros2" ] || die "--ros2-build cross --skip-build: $BIN/saint-ros2 is missing"
		else
			cross_ros2_ready || die "--ros2-build cross: $ROS2_CC cannot build against arm64 Cyclone DDS. Install an arm64 C compiler and Cyclone DDS for arm64 (Debian: dpkg --add-architecture arm64; apt-get install gcc-aarch64-linux-gnu cyclonedds-dev:arm64), pass --ros2-cc, or use --ros2-build pi"
		fi
		ROS2_HOW=cross
		;;
	pi)
		ROS2_HOW=pi
		echo "saint-ros2: built on the Pi with its Go and cyclonedds-dev (--ros2-build pi)"
		;;
	auto)
		if [ "$SKIP_BUILD" = 1 ] && [ -x "$BIN/saint-ros2" ]; then
			ROS2_HOW=cross
			echo "saint-ros2: deploying $BIN/saint-ros2 (--skip-build)"
		elif [ "$SKIP_BUILD" = 0 ] && cross_ros2_ready; then
			ROS2_HOW=cross
			echo "saint-ros2: cross-compiled here with $ROS2_CC and arm64 Cyclone DDS"
		else
			ROS2_HOW=pi
			echo "saint-ros2: built on the Pi with its Go and cyclonedds-dev ($ROS2_CC with arm64 Cyclone DDS is not here to cross-compile it)"
		fi
		;;
	esac
fi

# 0. The release key that signs the firmware. saint-server offers only
# signed images, and nodes flashed with this build trust only this key
# (built in by make firmware SIGN_KEY=...): without it no update could ever
# be installed. It stays on this machine, readable by this user only.
KEY=$KEY_DIR/saint-release.key
if [ "$SKIP_BUILD" = 0 ]; then
	if [ -n "$SIGN_KEY" ]; then
		[ -r "$SIGN_KEY" ] || die "--sign-key $SIGN_KEY: not readable"
		grep -q 'BEGIN PRIVATE KEY' "$SIGN_KEY" || die "--sign-key $SIGN_KEY: not a release private key (saintctl firmware keygen's .key, PKCS #8 PEM)"
		if [ -e "$KEY" ] && ! cmp -s "$SIGN_KEY" "$KEY"; then
			die "--sign-key $SIGN_KEY: $KEY holds another release key, which the nodes flashed so far trust (they would refuse images this one signs). To change keys, move $KEY_DIR away first and reflash every node (docs/deploy.md)"
		fi
	fi
	if [ ! -e "$KEY" ]; then
		run mkdir -p "$KEY_DIR"
		run chmod 0700 "$KEY_DIR"
		if [ -n "$SIGN_KEY" ]; then
			echo "release key: importing $SIGN_KEY into $KEY_DIR"
			run install -m 0600 "$SIGN_KEY" "$KEY"
			if [ "${SAINT_DRY_RUN:-0}" = 1 ]; then
				echo "run: go run ./cmd/saintctl firmware pubkey --key $KEY > $KEY_DIR/saint-release.pub"
			else
				go run ./cmd/saintctl firmware pubkey --key "$KEY" >"$KEY_DIR/saint-release.pub"
			fi
		else
			echo "release key: none in $KEY_DIR, generating one. Back it up (offline): losing it means reflashing every node to update them again."
			run go run ./cmd/saintctl firmware keygen --out "$KEY_DIR"
		fi
	else
		echo "release key: $KEY"
	fi
	# Readable by this user only, whatever created it.
	run chmod 0700 "$KEY_DIR"
	run chmod 0600 "$KEY"
fi

# 1. Build: static arm64 commands and the firmware tree, signed.
if [ "$SKIP_BUILD" = 0 ]; then
	run env CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath \
		-ldflags "-s -w -X main.version=$VERSION" -o "$BIN/" \
		./cmd/saint-server ./cmd/saint-node ./cmd/saintctl
	run make firmware VERSION="$VERSION" SIGN_KEY="$KEY"
	if [ "$ROS2_HOW" = cross ]; then
		run env CGO_ENABLED=1 CC="$ROS2_CC" GOOS=linux GOARCH=arm64 go build -trimpath \
			-ldflags "-s -w -X main.version=$VERSION" -o "$BIN/" ./cmd/saint-ros2
	fi
fi

if [ "${SAINT_DRY_RUN:-0}" != 1 ] && ! grep -q '"signature"' firmware/manifest.json 2>/dev/null; then
	echo "warning: firmware/manifest.json is not signed: saint-server will not offer it, and nodes flashed with it refuse every update. Build it with make firmware SIGN_KEY=$KEY (this script does without --skip-build)." >&2
fi

# 2. dnsmasq configuration from the template.
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
hosts=""
if [ -n "$NODE_HOSTS" ]; then
	[ -r "$NODE_HOSTS" ] || die "--node-hosts $NODE_HOSTS: not readable"
	hosts=$(grep -E '^dhcp-host=' "$NODE_HOSTS" || true)
fi
printf '%s\n' "$hosts" >"$STAGE/node-hosts"
sed -e "s|@IFACE@|$IFACE|g" -e "s|@SERVER_IP@|$SERVER_IP|g" \
	-e "/@NODE_HOSTS@/{r $STAGE/node-hosts" -e 'd;}' \
	deploy/dnsmasq/saint-internal.conf.in >"$STAGE/saint-internal.conf"
if [ "${SAINT_DRY_RUN:-0}" = 1 ]; then
	echo "dnsmasq configuration:"
	sed 's/^/  | /' "$STAGE/saint-internal.conf"
fi
run tar -C . -czf "$STAGE/firmware.tgz" firmware
ROS2_FILES=
if [ "$ROS2_HOW" = cross ]; then
	ROS2_FILES="$BIN/saint-ros2"
elif [ "$ROS2_HOW" = pi ]; then
	# The source tree as checked out (tracked files, with their local
	# changes), for go build on the Pi.
	git rev-parse --git-dir >/dev/null 2>&1 || die "--ros2-build pi copies the git checkout's files, and $ROOT is not a git checkout"
	git ls-files | while IFS= read -r f; do
		if [ -e "$f" ]; then printf '%s\n' "$f"; fi
	done >"$STAGE/src.list"
	run tar -C . -czf "$STAGE/saint-src.tgz" -T "$STAGE/src.list"
	ROS2_FILES="$STAGE/saint-src.tgz"
fi

# 3. Copy everything to a staging directory on the Pi.
REMOTE_STAGE=/tmp/saint-deploy
remote "rm -rf $REMOTE_STAGE && mkdir -p $REMOTE_STAGE && chown \$SUDO_USER $REMOTE_STAGE"
copy "$REMOTE_STAGE/" "$BIN/saint-server" "$BIN/saintctl" \
	deploy/systemd/saint-server.service deploy/systemd/saint-watchdog.conf deploy/polkit/50-saint-power.rules \
	"$STAGE/saint-internal.conf" "$STAGE/firmware.tgz" docs/deploy.md
if [ -n "$ROS2_FILES" ]; then
	copy "$REMOTE_STAGE/" "$ROS2_FILES" deploy/systemd/saint-ros2.service docs/ros2.md
fi

# 3b. saint-ros2 needs Cyclone DDS's library on the Pi; built there, also
# a C compiler and Go (go.mod's version, or Go 1.21 or later, which
# fetches it: GOTOOLCHAIN=auto). A failed build stops here, before anything
# is installed.
if [ -n "$ROS2_HOW" ]; then
	remote "dpkg -s cyclonedds-dev >/dev/null 2>&1 || { apt-get update && apt-get install -y cyclonedds-dev; }"
fi
if [ "$ROS2_HOW" = pi ]; then
	remote "command -v gcc >/dev/null || { apt-get update && apt-get install -y gcc libc6-dev; }"
	remote "GO=\$(command -v go || echo /usr/local/go/bin/go)
[ -x \"\$GO\" ] && [ -n \"\$(\"\$GO\" env GOTOOLCHAIN)\" ] || { echo 'saint-ros2: no Go 1.21 or later on the Pi: install Go (https://go.dev/dl/, linux-arm64) into /usr/local/go, or build saint-ros2 with --ros2-build cross' >&2; exit 1; }
mkdir -p $REMOTE_STAGE/src && tar -C $REMOTE_STAGE/src -xzf $REMOTE_STAGE/saint-src.tgz
cd $REMOTE_STAGE/src && HOME=/root GOTOOLCHAIN=auto CGO_ENABLED=1 \"\$GO\" build -trimpath -ldflags '-s -w -X main.version=$VERSION' -o $REMOTE_STAGE/saint-ros2 ./cmd/saint-ros2"
fi

# 4. Install.
remote "command -v dnsmasq >/dev/null || { apt-get update && apt-get install -y dnsmasq; }"
remote "id saint-server >/dev/null 2>&1 || useradd --system --home-dir /var/lib/saint-server --shell /usr/sbin/nologin saint-server"
remote "install -m 0755 $REMOTE_STAGE/saint-server $REMOTE_STAGE/saintctl /usr/local/bin/"
remote "install -D -m 0644 $REMOTE_STAGE/deploy.md /usr/local/share/doc/saint/deploy.md"
remote "install -m 0644 $REMOTE_STAGE/saint-server.service /etc/systemd/system/"
# systemd feeds the hardware watchdog (a hung kernel resets the Pi); the
# manager reads it at a re-exec (docs/deploy.md, "Watchdogs").
remote "install -D -m 0644 $REMOTE_STAGE/saint-watchdog.conf /etc/systemd/system.conf.d/saint-watchdog.conf && systemctl daemon-reexec"
remote "install -D -m 0644 $REMOTE_STAGE/50-saint-power.rules /etc/polkit-1/rules.d/50-saint-power.rules"
remote "install -D -m 0644 $REMOTE_STAGE/saint-internal.conf /etc/dnsmasq.d/saint-internal.conf"
# The internal address: NetworkManager (Raspberry Pi OS bookworm) or
# systemd-networkd (Ubuntu server).
remote "if systemctl is-active -q NetworkManager; then
  nmcli connection delete saint-internal >/dev/null 2>&1 || true
  nmcli connection add type ethernet ifname $IFACE con-name saint-internal ipv4.method manual ipv4.addresses $SERVER_IP/24 ipv4.never-default yes ipv6.method disabled
  nmcli connection up saint-internal
else
  printf '[Match]\nName=$IFACE\n\n[Network]\nAddress=$SERVER_IP/24\nConfigureWithoutCarrier=yes\n' >/etc/systemd/network/10-saint-internal.network
  systemctl restart systemd-networkd
fi"
remote "mkdir -p /var/lib/saint-server && tar -C /var/lib/saint-server -xzf $REMOTE_STAGE/firmware.tgz && chown -R saint-server:saint-server /var/lib/saint-server"
if [ -n "$ROS2_HOW" ]; then
	remote "id saint-ros2 >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin saint-ros2"
	remote "install -m 0755 $REMOTE_STAGE/saint-ros2 /usr/local/bin/"
	remote "install -D -m 0644 $REMOTE_STAGE/ros2.md /usr/local/share/doc/saint/ros2.md"
	remote "install -m 0644 $REMOTE_STAGE/saint-ros2.service /etc/systemd/system/"
fi
remote "systemctl daemon-reload && systemctl enable dnsmasq saint-server && systemctl restart dnsmasq saint-server"
if [ -n "$ROS2_HOW" ]; then
	# After saint-server: it makes the bridge's key at its first start.
	remote "systemctl enable saint-ros2 && systemctl restart saint-ros2"
fi
remote "rm -rf $REMOTE_STAGE"
echo "saint-server $VERSION deployed to $TARGET (internal $IFACE $SERVER_IP)."
if [ -n "$ROS2_HOW" ]; then
	echo "saint-ros2 $VERSION deployed (ROS 2 on the internal network; settings: /etc/default/saint-ros2, see docs/ros2.md)."
fi
echo "API token: ssh $TARGET sudo cat /var/lib/saint-server/api_token"
