package mpu6050

// The MPU-6050's register map (InvenSense RM-MPU-6000A), the registers and
// bits the driver uses, named as the register map document names them.

// Register addresses (RM-MPU-6000A section 3).
const (
	regSmplrtDiv   = 0x19
	regConfig      = 0x1A
	regGyroConfig  = 0x1B
	regAccelConfig = 0x1C
	regIntPinCfg   = 0x37
	regIntEnable   = 0x38
	regIntStatus   = 0x3A
	regAccelXoutH  = 0x3B
	regPwrMgmt1    = 0x6B
	regWhoAmI      = 0x75
)

// Bits.
const (
	pwrDeviceReset = 0x80
	pwrSleep       = 0x40
	clkPLLGyroX    = 0x01 // PWR_MGMT_1.CLKSEL: more stable than the internal 8 MHz oscillator
	intLatch       = 0x20 // INT_PIN_CFG.LATCH_INT_EN
	intDataRdy     = 0x01 // INT_ENABLE.DATA_RDY_EN, INT_STATUS.DATA_RDY_INT
)
