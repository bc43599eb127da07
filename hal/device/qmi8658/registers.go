package qmi8658

// The QMI8658's register map, the registers, bits and CTRL9 host commands
// the driver uses, named as the datasheet names them.

// Register addresses.
const (
	regWhoAmI     = 0x00
	regRevisionID = 0x01
	regCtrl1      = 0x02
	regCtrl2      = 0x03
	regCtrl7      = 0x08
	regCtrl8      = 0x09
	regCtrl9      = 0x0A
	regStatusInt  = 0x2D
	regStatus0    = 0x2E
	regTempL      = 0x33
	regReset      = 0x60
)

// Bits.
const (
	readBit                 = 0x80
	ctrl1AI                 = 0x40
	ctrl1INT2               = 0x10
	ctrl7AEn                = 0x01
	ctrl7GEn                = 0x02
	ctrl7DRDYDis            = 0x20
	status0ADA              = 0x01
	status0GDA              = 0x02
	resetCmd                = 0xB0
	ctrl8HandshakeStatusInt = 0x80 // CTRL9 handshake on STATUSINT.bit7, not INT1
	statusIntCmdDone        = 0x80
	cmdAck                  = 0x00
)

// Host commands written to CTRL9 (datasheet section 10).
const (
	CmdResetFIFO   byte = 0x04
	CmdRequestFIFO byte = 0x05
	CmdOnDemandCal byte = 0xA2 // gyroscope on-demand calibration
)
