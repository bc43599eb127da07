// Package linuxhost reads a Linux machine's health the way top and free do:
// CPU use from /proc/stat (between two samples), memory from
// /proc/meminfo, the SoC temperature from /sys/class/thermal, load and
// uptime from /proc, disk use from statfs, and the IPv4 addresses of the
// network interfaces.
//
// A node's board (hal/board/pi) reports it as its metrics, and the server
// reports its own machine's in the system status the dashboard shows.
// Every file is read through an fs.FS rooted at "/", so tests run against
// a fake /proc and /sys tree.
package linuxhost
