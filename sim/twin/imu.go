package twin

import (
	"math"
	"math/rand/v2"
)

// StandardGravity is g₀ in m/s², what an accelerometer at rest reads.
const StandardGravity = 9.80665

// Motion is what an IMU fixed to a rigid body experiences, in SI units: the
// physics' side of an IMU twin.
type Motion struct {
	// Orientation is the unit quaternion (w, x, y, z) that rotates vectors
	// from the sensor's axes into the world's, whose z axis points up. The
	// zero value is taken as the identity (sensor axes = world axes).
	Orientation [4]float64
	// AngularRate is the body's angular velocity in the sensor's axes, rad/s.
	AngularRate [3]float64
	// LinearAccel is the sensor point's acceleration in world axes, m/s²,
	// gravity not included.
	LinearAccel [3]float64
}

// SpecificForce returns what an accelerometer measures in its own axes: the
// acceleration minus gravity, Rᵀ·(a − g) with g = (0, 0, −g₀). A sensor
// lying flat and still reads (0, 0, +g₀).
func (m Motion) SpecificForce() [3]float64 {
	w, x, y, z := m.Orientation[0], m.Orientation[1], m.Orientation[2], m.Orientation[3]
	n := math.Sqrt(w*w + x*x + y*y + z*z)
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		w, x, y, z, n = 1, 0, 0, 0, 1
	}
	w, x, y, z = w/n, x/n, y/n, z/n
	v := [3]float64{m.LinearAccel[0], m.LinearAccel[1], m.LinearAccel[2] + StandardGravity}
	// Rotate v by the conjugate quaternion: world → sensor. Row i of Rᵀ is
	// column i of R.
	r := [3][3]float64{
		{1 - 2*(y*y+z*z), 2 * (x*y - w*z), 2 * (x*z + w*y)},
		{2 * (x*y + w*z), 1 - 2*(x*x+z*z), 2 * (y*z - w*x)},
		{2 * (x*z - w*y), 2 * (y*z + w*x), 1 - 2*(x*x+y*y)},
	}
	var out [3]float64
	for i := 0; i < 3; i++ {
		out[i] = r[0][i]*v[0] + r[1][i]*v[1] + r[2][i]*v[2]
	}
	return out
}

// IMUNoise is how far an IMU's readings stray from the truth: a constant
// bias per axis and white noise drawn afresh for every sample. The zero
// value is a perfect sensor.
type IMUNoise struct {
	AccelRMS  float64    // m/s², standard deviation per axis per sample
	GyroRMS   float64    // rad/s, standard deviation per axis per sample
	TempRMS   float64    // °C
	AccelBias [3]float64 // m/s²
	GyroBias  [3]float64 // rad/s
}

// Noise draws an IMU's errors from a seeded generator, so that the same
// seed and the same sequence of samples give the same readings.
//
// The zero value is not usable; call NewNoise. A Noise is not safe for
// concurrent use: its twin guards it.
type Noise struct {
	cfg IMUNoise
	rng *rand.Rand
}

// NewNoise returns a noise source with the given errors, seeded by seed.
func NewNoise(seed uint64, cfg IMUNoise) *Noise {
	return &Noise{cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x1d0a5e))}
}

// Apply returns accel, gyro and temperature with bias and one draw of noise
// added.
func (n *Noise) Apply(accel, gyro [3]float64, tempC float64) ([3]float64, [3]float64, float64) {
	for i := 0; i < 3; i++ {
		accel[i] += n.cfg.AccelBias[i]
		gyro[i] += n.cfg.GyroBias[i]
		if n.cfg.AccelRMS > 0 {
			accel[i] += n.rng.NormFloat64() * n.cfg.AccelRMS
		}
		if n.cfg.GyroRMS > 0 {
			gyro[i] += n.rng.NormFloat64() * n.cfg.GyroRMS
		}
	}
	if n.cfg.TempRMS > 0 {
		tempC += n.rng.NormFloat64() * n.cfg.TempRMS
	}
	return accel, gyro, tempC
}

// SeededBias returns a bias per axis drawn uniformly from ±accelMax and
// ±gyroMax by seed: a fleet of simulated IMUs that differ as real parts do,
// each the same on every run.
func SeededBias(seed uint64, accelMax, gyroMax float64) (accel, gyro [3]float64) {
	r := rand.New(rand.NewPCG(seed, 0xb1a5))
	for i := 0; i < 3; i++ {
		accel[i] = (2*r.Float64() - 1) * accelMax
		gyro[i] = (2*r.Float64() - 1) * gyroMax
	}
	return accel, gyro
}

// IMUSample is what an IMU measures, in SI units in the chip's own axes.
type IMUSample struct {
	Accel [3]float64 // specific force, m/s²; a chip lying flat at rest reads (0, 0, +g)
	Gyro  [3]float64 // angular rate, rad/s
	TempC float64    // die temperature, °C
}

// IMURest is the sample of a chip lying flat and still at 25 °C.
func IMURest() IMUSample {
	return IMUSample{Accel: [3]float64{0, 0, StandardGravity}, TempC: 25}
}
