package feetech

// The Feetech STS/SCS control table: the memory map of a servo, read and
// written by address with READ, WRITE and SYNC WRITE.

// Control table addresses, shared by STS and SCS servos.
const (
	RegFirmwareMajor      = 0x00
	RegFirmwareMinor      = 0x01
	RegModelNumber        = 0x03 // 2 bytes
	RegID                 = 0x05
	RegBaudRate           = 0x06
	RegReturnDelay        = 0x07 // 2 µs units
	RegStatusReturnLevel  = 0x08 // 0: answer PING and READ only; 1: answer everything
	RegMinAngleLimit      = 0x09 // 2 bytes
	RegMaxAngleLimit      = 0x0B // 2 bytes
	RegMaxTemperature     = 0x0D
	RegMaxVoltage         = 0x0E
	RegMinVoltage         = 0x0F
	RegMaxTorque          = 0x10 // 2 bytes
	RegTorqueEnable       = 0x28
	RegAcceleration       = 0x29 // STS only
	RegGoalPosition       = 0x2A // 2 bytes
	RegGoalTime           = 0x2C // 2 bytes, ms
	RegGoalSpeed          = 0x2E // 2 bytes, steps/s
	RegLock               = 0x37 // STS: EPROM write lock
	RegPresentPosition    = 0x38 // 2 bytes
	RegPresentSpeed       = 0x3A // 2 bytes, steps/s, sign bit 15
	RegPresentLoad        = 0x3C // 2 bytes, 0.1 %, sign bit 10
	RegPresentVoltage     = 0x3E // 0.1 V
	RegPresentTemperature = 0x3F // °C
	RegMoving             = 0x42
	RegPresentCurrent     = 0x45 // 2 bytes (STS)
)
