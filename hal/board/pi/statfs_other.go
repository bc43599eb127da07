//go:build !linux

package pi

import "errors"

// StatFS is only implemented on Linux.
func StatFS(path string) (total, free uint64, err error) {
	return 0, 0, errors.New("pi: disk usage is only read on Linux")
}
