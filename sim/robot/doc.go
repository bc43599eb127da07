// Package robot assembles the whole simulated robot on one executor: the
// physics world (sim/world) with its models (sim/model/...), the six
// simulated Raspberry Pis the nodes run on (sim/board: head, arms left and
// right, tracks, console, balance), and the device twins (sim/twin/...)
// that connect the two at the wire level. A node's drivers talk to the
// boards' pins and buses exactly as on the robot; the physics reads what
// they drive and writes back what the sensors measure.
//
// # Wiring
//
// Every physics step runs, in this order:
//
//	inputs   head: PWM on GPIO12/13 (pan, tilt) and PCA9685 0x40
//	               channel 0 (roll) → servo pulses
//	         arms: PCA9685 channels 0–5 (a valid servo pulse wins) or the
//	               Feetech bus, ids 1–5 (joints) and 6 (gripper): goal
//	               position, speed or time, torque enable and torque
//	               limit → joint servos
//	               (acceleration is not modelled)
//	         tracks: BTS7960 twins on PCA9685 0x41 channels 0/1 +
//	               enable GPIO5 (left) and 2/3 + enable GPIO6 (right)
//	               → motor duty or coast
//	         balance: VESC twins 68 (left) and 56 (right) on can0 →
//	               wheel current, duty, brake or speed/position loops
//	models   head, arm_left, arm_right, arm contact check, tracks, balance
//	outputs  head: IMU → MPU6050 twin (which adds its seeded noise)
//	         arms: joint state → Feetech present position/speed/load;
//	               servo supply → INA219 at 0x41
//	         tracks: sprocket angles → quadrature encoder twins on
//	               GPIO17/27 (left) and 22/23 (right); battery → INA219 0x40;
//	               each bridge's supply current → INA219 0x44 (left), 0x45
//	         balance: IMU → QMI8658 twin; wheels → VESC status (ERPM,
//	               currents, duty, voltage, tachometer)
//
// With Options.CANArms the arms' boards have the arms_can profile: the
// joints are MIT-mode actuator twins (sim/twin/mitmotor) 1–5 on each arm
// board's can0 (ArmActuatorModel names their models), whose control law
// runs on the executor every millisecond; the physics applies the torque
// each computed (inputs) and reports the joints' angles and speeds to them
// (outputs). The gripper stays Feetech servo 6 on the UART. Links
// "arms_left/can/1"…"5" take an actuator off the bus.
//
// A positive command drives a motor forward on either side: the harness
// is wired so that the same sign means the same direction left and right.
//
// Powered on, nothing drives: the head's servos see no pulses and the
// Feetech servos start with torque off, as the real ones do, so until a
// node commands them the head's servos are limp (the level head balances
// on its tilt axis until disturbed) and the arms fall limp; the H-bridges'
// enables are low and the VESCs are released.
//
// # Disturbances
//
// The world knows the bodies "tracks" and "balance" (push, impulse); the
// links "head/i2c/0x68", "arms_left/i2c/0x40" (and 0x41, and the right
// arm's), "tracks/i2c/0x40", "console/i2c/0x3c" (I²C chips unplugged: they
// stop acknowledging), "arms_left/feetech/1"…"6" (a servo unplugged from the
// bus) and "arms_left/feetech" (the whole bus), "balance/can/68" and "balance/can/56" (a VESC off the bus),
// "tracks/encoder/left" and "/right" (encoder cable pulled: the lines float
// to their pull-ups), "head/pwm/pan", "tilt", "roll" (servo signal wire
// cut); and the devices "head", "arm_left", "arm_right", "tracks",
// "balance" (everything of the model dead) and their parts
// ("head/pan", "arm_left/elbow", "arm_left/gripper",
// "tracks/left_motor", "balance/right_motor" ...).
package robot
