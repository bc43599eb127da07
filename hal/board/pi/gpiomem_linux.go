package pi

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// openGPIOMem maps path (/dev/gpiomem, readable by group gpio on Raspberry
// Pi OS) read-only: the GPIO block's registers, read without requesting any
// line and without changing any.
func openGPIOMem(path string) (PinReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pi: %w", err)
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, gpioBlockLen, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("pi: mmap %s: %w", path, err)
	}
	// Kept for the life of the process, like the board.
	return bcmPinRegisters{word: func(off int) uint32 {
		// One 32-bit load: the peripheral bus answers word reads.
		return atomic.LoadUint32((*uint32)(unsafe.Pointer(&mem[off])))
	}}, nil
}
