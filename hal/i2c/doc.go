// Package i2c defines the I²C bus a chip driver talks through, after
// periph.io/x/conn/v3/i2c. Fakes for tests are in i2ctest.
package i2c
