package qemuvm

// AgentPortName is the name of the virtio-serial port of the command
// channel (/dev/virtio-ports/saint.cmd under udev).
const AgentPortName = "saint.cmd"

// AgentScript is the guest side of the command channel (see the package
// documentation for its protocol). It runs under busybox sh or dash, and
// needs base64 (busybox or coreutils). Install it in a guest as an
// executable file and start it at boot: BusyboxInitramfs does, and
// AgentUnit is a systemd service for it at /usr/local/sbin/qemuvm-agent.
const AgentScript = `#!/bin/sh
# qemuvm-agent: runs the host's shell commands from the virtio-serial port
# ` + AgentPortName + ` and answers with their exit status and output.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
work=/run/qemuvm
mkdir -p "$work"
port=
while [ -z "$port" ]; do
	for f in /sys/class/virtio-ports/*/name; do
		if [ -r "$f" ] && [ "$(cat "$f")" = ` + AgentPortName + ` ]; then
			d=${f%/name}
			port=/dev/${d##*/}
		fi
	done
	[ -n "$port" ] && [ -c "$port" ] || { port=; sleep 0.2; }
done
exec 3<>"$port"
printf 'READY %s\n' "$(cat /proc/sys/kernel/random/boot_id)" >&3
while IFS=' ' read -r id cmd <&3; do
	printf '%s' "$cmd" | base64 -d >"$work/cmd"
	sh "$work/cmd" </dev/null >"$work/out" 2>&1
	rc=$?
	{
		printf '%s %s ' "$id" "$rc"
		base64 -w0 "$work/out"
		printf '\n'
	} >&3
done
`

// AgentUnit is a systemd service that runs AgentScript, installed as
// /usr/local/sbin/qemuvm-agent, from early boot (sysinit.target) so a
// test can watch the rest of the boot. Its commands run as root; what they
// start in the background outlives them (KillMode=process).
const AgentUnit = `[Unit]
Description=qemuvm guest agent (the host's command channel)
DefaultDependencies=no
After=systemd-udevd.service local-fs.target
Before=shutdown.target
Conflicts=shutdown.target

[Service]
ExecStart=/usr/local/sbin/qemuvm-agent
Restart=always
RestartSec=1
KillMode=process

[Install]
WantedBy=sysinit.target
`
