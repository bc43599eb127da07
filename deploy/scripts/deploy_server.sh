#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# deploy_server.sh installs saint-server on the robot's server Pi over ssh:
# the arm64 commands, the node firmware tree, the systemd unit, dnsmasq for
# the internal network (DHCP and DNS on 192.168.10.0/24), the static
# internal address and the polkit rule for the power commands.
#
#   deploy/scripts/deploy_server.sh --host pi@saint-server.local [options]
#
# Options:
#   --host USER@HOST     the server Pi (required; the user needs sudo)
#   --iface IFACE        internal Ethernet interface (default eth0)
#   --server-ip IP       the server's internal address (default 192.168.10.1)
#   --version V          version to build (default: the latest release tag, else 0.1.0)
#   --node-hosts FILE    dnsmasq dhcp-host lines for fixed node addresses
#   --skip-build         deploy what bin/linux-arm64 and firmware/ hold
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
SSH_OPTS=${SSH_OPTS:-}

while [ $# -gt 0 ]; do
	case $1 in
	--host) TARGET=${2:?--host needs USER@HOST}; shift 2 ;;
	--iface) IFACE=${2:?--iface needs a name}; shift 2 ;;
	--server-ip) SERVER_IP=${2:?--server-ip needs an address}; shift 2 ;;
	--version) VERSION=${2:?--version needs a version}; shift 2 ;;
	--node-hosts) NODE_HOSTS=${2:?--node-hosts needs a file}; shift 2 ;;
	--skip-build) SKIP_BUILD=1; shift ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[ -n "$TARGET" ] || die "--host USER@HOST is required"
case $SERVER_IP in
192.168.10.*) ;;
*) echo "warning: --server-ip $SERVER_IP is outside the internal network 192.168.10.0/24" >&2 ;;
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

# 1. Build: static arm64 commands and the firmware tree.
if [ "$SKIP_BUILD" = 0 ]; then
	run env CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath \
		-ldflags "-s -w -X main.version=$VERSION" -o "$BIN/" \
		./cmd/saint-server ./cmd/saint-node ./cmd/saintctl
	run make firmware VERSION="$VERSION"
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

# 3. Copy everything to a staging directory on the Pi.
REMOTE_STAGE=/tmp/saint-deploy
remote "rm -rf $REMOTE_STAGE && mkdir -p $REMOTE_STAGE && chown \$SUDO_USER $REMOTE_STAGE"
copy "$REMOTE_STAGE/" "$BIN/saint-server" "$BIN/saintctl" \
	deploy/systemd/saint-server.service deploy/polkit/50-saint-power.rules \
	"$STAGE/saint-internal.conf" "$STAGE/firmware.tgz" docs/deploy.md

# 4. Install.
remote "command -v dnsmasq >/dev/null || { apt-get update && apt-get install -y dnsmasq; }"
remote "id saint-server >/dev/null 2>&1 || useradd --system --home-dir /var/lib/saint-server --shell /usr/sbin/nologin saint-server"
remote "install -m 0755 $REMOTE_STAGE/saint-server $REMOTE_STAGE/saintctl /usr/local/bin/"
remote "install -D -m 0644 $REMOTE_STAGE/deploy.md /usr/local/share/doc/saint/deploy.md"
remote "install -m 0644 $REMOTE_STAGE/saint-server.service /etc/systemd/system/"
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
remote "systemctl daemon-reload && systemctl enable dnsmasq saint-server && systemctl restart dnsmasq saint-server"
remote "rm -rf $REMOTE_STAGE"
echo "saint-server $VERSION deployed to $TARGET (internal $IFACE $SERVER_IP)."
echo "API token: ssh $TARGET sudo cat /var/lib/saint-server/api_token"
