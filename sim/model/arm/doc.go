// Package arm models one of the robot's arms: a serial chain of five
// servo-driven joints and a two-finger gripper, with gravity, joint friction,
// torque limits, efforts, grasp force, and collision detection against the
// floor, the arm itself, the torso and the other arm.
//
// # Kinematics
//
// From the mount on the shoulder: shoulder_pan about z, a 5 cm bracket up,
// shoulder_lift about y, the upper arm (25 cm), elbow about y, the forearm
// (22 cm), wrist_pitch about y, a 6 cm wrist, wrist_roll about x, and the hand
// (10 cm to the centre of the fingers). With every angle zero the arm points
// straight forward (+x); positive shoulder_lift lowers it, so the upper arm
// hangs at shoulder_lift = 90°; New leaves it there with the elbow at −90°
// (forearm forward). Hanging straight down, the arm reaches the floor.
//
// # Dynamics
//
// The five joints are one rigid-body chain (sim/model/rigid): each link a
// solid cylinder of its mass, length and radius, each servo's rotor and
// gearbox inertia its joint's armature, a held object a point mass at the
// fingers. The servos' drive (sim/model/servo's law, DriveTorque) and the
// joints' friction, viscous and Coulomb (b·ω + τ_c·tanh(ω/0.01)), are the
// joint torques of
//
//	M(q)·q̈ + C(q, q̇)·q̇ + g(q) = τ
//
// with M from the composite-rigid-body algorithm and C·q̇ + g from recursive
// Newton–Euler, integrated by the explicit midpoint rule over the world
// step. A joint that runs
// into its hard stop is stopped by an impulse there, which changes the
// other joints' rates as the stop's reaction moves the chain. Efforts are
// the servos' output torques. The MuJoCo oracle (sim/oracle/mujoco) holds
// the trajectories to MuJoCo's within 10⁻³ rad RMS; the older model — each
// joint a servo loaded by the diagonal of M and gravity, no coupling —
// erred by up to 0.07 rad RMS, even with the Feetech servos' gearboxes, and
// is kept behind Params.DiagonalInertia to show it.
//
// # Gripper
//
// A servo turns two fingers on levers of r_g: the gap is MaxGap/2 + 2·r_g·θ.
// An object of width w between them (Grasp) is a stiff spring: closing below
// w the fingers squeeze it with F = k·(w − gap), which loads the servo with
// 2·F·r_g. The force is therefore capped by the servo's torque limit, which is
// how a GripperCommand's force becomes a grasp force.
//
// # Collisions
//
// Each link is a capsule. After every step the arm reports a link below the
// floor (z = 0 in the robot frame), two links of the chain that are not
// neighbours overlapping, a link overlapping the torso, and (CheckPair) a
// link overlapping the other arm. Collisions are detected, not resolved: the
// joints keep the motion their servos give them, as a real arm's would until
// something breaks, and the role's collision detection is what must react.
//
// # Cost
//
// The kinematics and the collision checks depend only on the pose, so they
// are computed again only once a joint has moved by more than
// PoseTolerance (1e-5 rad, 7 µm at the hand); the mass matrix and bias only
// then or when a joint moves faster than 10⁻³ rad/s. An arm in equilibrium
// (every joint slower than 10⁻⁶ rad/s and accelerating less than
// 10⁻³ rad/s²) is not integrated: one evaluation of its dynamics decides. CheckPair rejects the two arms by their
// bounding boxes before testing any pair of capsules, and the torso likewise.
//
// # Typical values (Default)
//
// Joints: Feetech smart servos at 12 V, STS3250-class (50 kg·cm = 4.9 N·m,
// 0.19 s/60°) for the shoulder, STS3215-class (30 kg·cm = 2.9 N·m) for the
// elbow, 19.5 kg·cm = 1.9 N·m at the wrist and gripper. Links of aluminium
// and printed parts: bracket 0.2 kg, upper arm 0.4 kg, forearm 0.3 kg, wrist
// 0.15 kg, hand 0.25 kg. Viscous friction 0.02 N·m·s/rad and 0.05 N·m
// Coulomb per joint. Fingers on 3 cm levers opening to 8 cm; objects as
// stiff as firm plastic, 2000 N/m. Mounts 0.22 m either side of the torso, 0.45 m
// above the floor.
package arm
