// Package socketcan is hal/can on Linux SocketCAN, through
// go.einride.tech/can: a CAN HAT (MCP2515 on SPI) or a USB adapter (gs_usb,
// candleLight) shows up as a network interface, can0, that this package
// opens as a raw CAN socket.
//
// The interface must be up with its bitrate set before Open, which takes no
// privileges itself; as root, or from a systemd unit:
//
//	ip link set can0 up type can bitrate 500000
//
// Bus owns one reader goroutine for the life of the socket. It stamps each
// frame with the injected clock when the read returns (the kernel's
// SO_TIMESTAMP is not exposed by the library), and hands the frame to every
// callback registered with Receive, on that goroutine; callbacks must not
// block, and code on an executor Posts from them. Error frames are not
// delivered (the socket does not ask for them), and neither are the frames
// this Bus sends: the kernel gives a socket's own frames only to the other
// sockets on the interface, where cantest's loopback bus hands them to every
// receiver.
//
// Bus works over any net.Conn carrying SocketCAN's 16-byte struct can_frame
// records, which is how it is tested without a kernel (net.Pipe); on a
// kernel with the vcan module, the tests also run against a virtual CAN
// interface in a network namespace of their own. Package smoketest, built
// with the "hardware" tag, checks a real interface.
package socketcan
