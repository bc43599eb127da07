// Package rtpspeer is a DDS participant written by hand in RTPS 2.3 over
// UDP, byte for byte: just enough of one to put, in front of a DDS
// implementation under test, a peer whose endpoints carry XTypes type
// information with kinds that implementation may not know.
//
// It announces itself (SPDP, to every participant port of a domain on
// 127.0.0.1), announces a writer and a reader on a topic (SEDP) whose
// TypeInformation (PID_TYPE_INFORMATION, 0x0075) names a final struct with
// int8 and uint8 members — XTypes 1.3's TK_INT8 (0x0C) and TK_UINT8
// (0x0D), which Cyclone DDS 0.10 lacks — and sends the TypeLookup reply
// (builtin entity 0x000301c3) that carries that struct's minimal type
// object, both unasked and in answer to a TypeLookup request. The type
// object and its hash are computed here as XTypes specifies them
// (XCDR2, MD5).
//
// It is test support: it sends no user data, keeps no history, resends
// its announcements until stopped rather than acknowledging anything, and
// records what it receives (the GUIDs of the participants it hears, the
// TypeLookup requests addressed to it).
package rtpspeer
