// Package limb is a limb of a humanoid whose torso is held fixed — the
// robot hanging on a test stand by its pelvis: a serial chain of rigid
// links from a fixed mount on the torso (a leg's hip, an arm's shoulder,
// the neck), each joint driven by a torque-controlled actuator.
//
// The dynamics are the rigid-body chain's (sim/model/rigid: the mass
// matrix by CRBA with each actuator's rotor inertia as the joint's
// armature, Coriolis and gravity terms by RNEA),
//
//	M(q)·q̈ + C(q, q̇)·q̇ + g(q) = τ_actuator − b·q̇ − τ_c·tanh(q̇/0.01),
//
// integrated by the explicit midpoint rule in substeps of at most 1 ms
// (the dynamics of a limb at rest reused, rigid.Chain.UpdateNear), static
// friction holding a limb whose joints are all nearly still and within
// their Coulomb friction (Karnopp's model, as the arms);
// joints end at hard stops (an inelastic impulse, rigid.Chain.Stop). The
// actuators' torques come from their twins (sim/twin/mitmotor), which run
// their PD + feed-forward law at their own loop rate on what SetTorque's
// caller reads from the model; an actuator may be mounted reversed (Mount
// −1) and its encoder's zero may sit away from the joint's (ZeroAt), as
// joints.yaml's direction and urdf_offset describe.
//
// Because the torso is fixed, the limbs do not move each other: each is its
// own chain. Walking is not modelled: there is no floating base, no ground
// and no foot contact, so a leg swings in the air; a squat on the stand
// bends the legs without lifting or lowering the body.
//
// Humanoid returns the PI Plus–like humanoid's limbs (legs of six joints,
// arms of four, a neck of two) with their masses, lengths and actuator
// models.
package limb
