package main

import (
	"sync"

	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/periph"
	"github.com/saint-os/saint/hal/serial"
	"github.com/saint-os/saint/hal/uart"
	"github.com/saint-os/saint/server/inputs/rc"
)

// openSerial opens the RC receiver's UART (config/rc_receiver.yaml's
// uart.device). An inverted line (SBUS) needs the hardware inverter the
// file's uart.inverted says is fitted: a Pi's UART cannot invert.
func openSerial(device string, c uart.Config) (uart.Port, func() error, error) {
	p, err := serial.Open(device, &serial.Options{Config: c, HardwareInverter: c.Inverted})
	if err != nil {
		return nil, nil, err
	}
	return p, p.Close, nil
}

// gpioPins opens GPIO inputs for PPM and PWM receivers through the GPIO
// character device, opening the host only when a receiver needs it.
func gpioPins() rc.PinOpener {
	var mu sync.Mutex
	var host *periph.Host
	return func(bcm int) (gpio.EdgeWatcher, func() error, error) {
		mu.Lock()
		defer mu.Unlock()
		if host == nil {
			h, err := periph.Open(nil)
			if err != nil {
				return nil, nil, err
			}
			host = h
		}
		p, err := host.GPIO(bcm)
		if err != nil {
			return nil, nil, err
		}
		if err := p.In(gpio.Float, gpio.BothEdges); err != nil {
			return nil, nil, err
		}
		return p, nil, nil
	}
}
