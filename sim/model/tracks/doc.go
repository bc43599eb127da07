// Package tracks models the tracked base: two brushed DC motors
// (sim/model/dcmotor) behind H-bridges, each driving a track through a
// gearbox and sprocket, the tracks' skid-steer contact with the floor, the
// quadrature encoders on the motors and the battery (sim/model/battery)
// whose voltage sags under their current.
//
// # Model
//
// Each H-bridge applies d·V_bat to its motor (d the signed duty, −1 to 1);
// with its enables low the motor is open circuit (coasting). The battery
// supplies I_bat = I_q + d_L·i_L + d_R·i_R, the electronics' quiescent
// current plus what the bridges pass on, and sags by R_int·I_bat.
//
// Each track's surface moves at v_t = ω/N·r_s (motor speed ω, gear ratio N,
// sprocket radius r_s). The ground under it moves at v ∓ ψ'·B/2 (body
// speed v, yaw rate ψ', gauge B). Their difference is the slip s, and the
// track pushes on the floor with a regularised Coulomb force
//
//	F = μ·(m·g/2)·tanh(s/s₀)
//
// which reacts on its motor as a load torque F·r_s/N (the track's inertia is
// added to the rotor's as J_t/N²). The body, with a lateral velocity for
// when it is pushed sideways, moves as
//
//	m·(v' − v_y·ψ') = F_L + F_R − C_rr·m·g·tanh(v/0.01) + F_push,x
//	m·(v_y' + v·ψ') = −μ_lat·m·g·tanh(v_y/s_lat) + F_push,y
//	I_z·ψ''        = (F_R − F_L)·B/2 − μ_lat·m·g·l/4·tanh(ψ'·l/2/s_lat)
//
// where the last term is the classic skid-steer turning resistance of
// tracks of contact length l scraping sideways. With l = 0 the base is an
// ideal differential drive: it follows v = (v_L + v_R)/2, ψ' = (v_R − v_L)/B.
//
// These laws act each on its own, so a track slipping along and across at
// once gets both in full. With Params.ContactPatch the ground's forces are
// instead those of a contact patch: ContactPoints points per track, at the
// midpoints of equal segments of l, each carrying m·g/(2·ContactPoints),
// each slipping at (s_x, s_y) = (v_t − (v − ψ'·y), −(v_y + ψ'·x)) and
// pushed by anisotropic Coulomb friction sharing one elliptic cone
// (ContactForce):
//
//	(F_x, F_y) = N·tanh(|(s_x/s₀, s_y/s_lat)|)·(μ²·s_x, μ_lat²·s_y)/|(μ·s_x, μ_lat·s_y)|
//
// summed into the traction of each track, the lateral force and the yaw
// moment. Slipping one way only it is the laws above; turning in place the
// points scrub sideways and along at once, and the base turns at the rate
// where their moments balance (0.91 of the ideal drive's for the Default
// base), which MuJoCo's contacts confirm (sim/oracle/mujoco) and the
// default laws overestimate by 5 %. It is opt-in because the tracks role is
// tuned on the default laws: with the patch its spin's start overshoots
// the role's 4 rad/s² angular-acceleration limit (5.3 rad/s² over 20 ms).
// The tanh regularisation lets a body pushed below its grip creep at
// s·atanh(F/F_max) (a few mm/s sideways with s_lat); that is the price of
// smooth equations an explicit integrator can step.
// Everything (motor currents and speeds, body velocities, pose) is one state
// vector integrated with RK4 in substeps of at most 0.5 ms (and L/(2R)):
// TestStepConvergence checks the result against a 20 times finer step.
//
// Encoders count 4 edges per line of the motor's encoder disc: CPR counts
// per sprocket revolution, count = ⌊θ_sprocket·CPR/2π⌋.
//
// # Typical values (Default)
//
// A 20 kg base, tracks 0.40 m apart with 0.45 m on the ground, 24 V
// gearmotors (dcmotor.Gearmotor24V) through 20:1 gearboxes onto 50 mm
// sprockets (no-load ≈ 1.2 m/s at 24 V), μ = 0.8 (rubber on concrete),
// μ_lat = 0.5, C_rr = 0.03, s₀ = 0.05 m/s, s_lat = 0.01 m/s, 11-line hall encoders on the
// motor shafts (11·4·20 = 880 counts per sprocket turn), an 8S LiFePO4 pack
// and 0.5 A for the electronics.
package tracks
