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
// sprocket radius r_s) and touches the floor at ContactPoints points, the
// midpoints of equal segments of its contact length l, each carrying
// m·g/(2·ContactPoints). Under a point at (x, y) in the body frame (x
// ahead of the middle, y = ±B/2 to the left, B the gauge) the ground moves
// at (v − ψ'·y, v_y + ψ'·x) (body speed v, lateral speed v_y, yaw rate
// ψ'), so the point slips at (s_x, s_y) = (v_t − (v − ψ'·y), −(v_y + ψ'·x))
// and the floor pushes it by anisotropic Coulomb friction sharing one
// elliptic cone (ContactForce):
//
//	(F_x, F_y) = N·tanh(|(s_x/s₀, s_y/s_lat)|)·(μ²·s_x, μ_lat²·s_y)/|(μ·s_x, μ_lat·s_y)|
//
// Each track's F_x, summed, is its traction, which reacts on its motor as a
// load torque F·r_s/N (the track's inertia is added to the rotor's as
// J_t/N²). The body moves as
//
//	m·(v' − v_y·ψ') = ΣF_x − C_rr·m·g·tanh(v/0.01) + F_push,x
//	m·(v_y' + v·ψ') = ΣF_y + F_push,y
//	I_z·ψ''        = Σ(x·F_y − y·F_x)
//
// Slipping one way only a track pushes with μ·(m·g/2)·tanh(s_x/s₀) along
// or μ_lat·(m·g/2)·tanh(s_y/s_lat) across. Turning in place its points
// scrub along and across at once, sharing the cone, and the base turns at
// the rate where their moments balance: 0.91 of an ideal differential
// drive's ((v_R − v_L)/B) for the Default base, in proportion to the turn
// rate as for tracks of hard Coulomb friction, which MuJoCo's contacts
// confirm (sim/oracle/mujoco). With l = 0 the base touches the floor at
// one point under each sprocket, no moment resists its turning and it is
// an ideal differential drive: v = (v_L + v_R)/2, ψ' = (v_R − v_L)/B.
//
// The classic skid-steer model's turning resistance of its own (a fixed
// moment μ_lat·m·g·l/4 beside traction and lateral friction, each on its
// own) is not used: it gives a track slipping along and across at once
// both forces in full, turns in place 5 % faster than MuJoCo's contacts and
// holds the base back as a fixed moment at the start of every turn.
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
