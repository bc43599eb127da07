//go:build !linux

package pi

import "errors"

func openGPIOMem(string) (PinReader, error) {
	return nil, errors.New("pi: /dev/gpiomem exists only on Linux")
}
