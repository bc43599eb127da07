//go:build !linux

package linuxhost

import "errors"

// StatFS is only implemented on Linux.
func StatFS(path string) (total, free uint64, err error) {
	return 0, 0, errors.New("linuxhost: disk usage is only read on Linux")
}
