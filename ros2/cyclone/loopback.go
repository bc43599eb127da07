package cyclone

// LoopbackConfig is a Cyclone DDS configuration (the value of
// CYCLONEDDS_URI) that keeps a participant on the loopback interface:
// no multicast, and 127.0.0.1 as the one peer to discover through. Tests
// use it so that nothing leaves the machine.
const LoopbackConfig = `<CycloneDDS><Domain Id="any">` +
	`<General><Interfaces><NetworkInterface name="lo"/></Interfaces><AllowMulticast>false</AllowMulticast></General>` +
	`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>60</MaxAutoParticipantIndex>` +
	`<Peers><Peer address="127.0.0.1"/></Peers></Discovery>` +
	`</Domain></CycloneDDS>`
