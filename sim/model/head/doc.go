// Package head models the robot's head: three hobby servos in series, pan
// (about z), tilt (about y) and roll (about x), each turning the rest of
// the head, and an IMU (MPU6050) fixed in the head.
//
// # Model
//
// The three axes move one rigid body (sim/model/rigid): the head, of Mass,
// its centre of mass d = GravityMoment/(Mass·g) above the tilt and roll
// axes, so gravity tips it further the more it leans (τ_tilt =
// m·g·d·sin(tilt) when level in roll), with the inertia about each axis,
// level, its Axis.Inertia; each servo's rotor inertia is its joint's
// armature. The servos' drive (sim/model/servo's law) less each bearing's
// viscous friction are the joint torques; the mass matrix, Coriolis and
// gravity terms couple the axes (panning with the head tilted meets another
// inertia), RK4 integrates them over the world step, and a hard stop ends
// a motion with an impulse that moves the other axes too. Treating the axes
// as independent, as this model did before, erred by 0.02 rad RMS against
// MuJoCo (sim/oracle/mujoco); now it is within 3·10⁻⁴ rad.
//
// The head's orientation is R = Rz(pan)·Ry(tilt)·Rx(roll): positive pan
// turns left, positive tilt looks down, positive roll drops the right ear.
// The IMU, r from the intersection of the axes, measures in the head frame
//
//	gyro  = Rx(roll)ᵀ·(Ry(tilt)ᵀ·(0, 0, pan') + (0, tilt', 0)) + (roll', 0, 0)
//	accel = Rᵀ·(α×R·r + ω×(ω×R·r) + (0, 0, g))   (+g on z when level and still)
//
// with ω the head's angular velocity and α its change over the last step,
// both in the robot frame; plus, when the head has a random stream, white
// noise and a constant bias drawn once (MPU6050 datasheet: gyro noise 0.005 °/s/√Hz, accelerometer
// 400 µg/√Hz; at a 500 Hz bandwidth about 0.002 rad/s and 0.09 m/s²).
//
// # Typical values (Default)
//
// A 1.2 kg head (camera, shell, servos) with its centre of mass 4 cm above
// the tilt axis: m·g·d = 0.47 N·m, a quarter of the way to a MG996R's
// 0.92 N·m stall torque at 90° tilt. Inertia about each axis 4–5·10⁻³ kg·m²
// (a 15 cm head as a solid sphere, plus the offset); the IMU 5 cm forward of
// and 3 cm above the axes, by the camera. Servo travel follows the head
// role's limits, spanned by 500–2500 µs: pan 360° (a 360° position
// servo), tilt 180°, roll 90°.
package head
