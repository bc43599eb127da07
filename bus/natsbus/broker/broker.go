package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// DefaultPort is the robot's internal NATS port, NATS's standard client
// port.
const DefaultPort = 4222

// DefaultMaxPayload is the largest message the embedded server accepts when
// Options.MaxPayload is 0. NATS's own default (1 MiB) is smaller than
// one uncompressed 640×480 RGB camera frame encoded as JSON.
const DefaultMaxPayload = 8 << 20

// Options configures an embedded NATS natsserver. A nil *Options
// means the zero value.
type Options struct {
	// Host is the address to listen on. "" means 127.0.0.1: the broker
	// carries motor commands, so it listens beyond the machine only when
	// told to (on the robot, the internal network address, e.g.
	// 192.168.10.1; never the WiFi side), and then with Authentication.
	Host string
	// Port is the TCP port; 0 or -1 picks a free one (tests), the robot
	// uses DefaultPort.
	Port int
	// MaxPayload is the largest message in bytes; 0 means
	// DefaultMaxPayload.
	MaxPayload int32
	// Name is the server's name in monitoring; "" means "saint".
	Name string
	// Logger receives the server's log (notices as Info). Nil discards it.
	Logger *slog.Logger
	// ReadyTimeout bounds how long Start waits for the listener;
	// 0 means 10 s.
	ReadyTimeout time.Duration
	// Authentication decides who may connect and with which permissions
	// (saint-server's is server/busaccess: nkeys and per-role subjects).
	// Nil accepts every client with every permission: for tests and
	// brokers on loopback only.
	Authentication natsserver.Authentication
	// TLS, when set, makes the server require TLS from every client.
	TLS *tls.Config
}

// Server is an embedded NATS server: the broker saint-server runs for its
// nodes, or a test runs on 127.0.0.1.
type Server struct {
	ns *natsserver.Server
}

// With Authentication, the server pings each client this often and drops
// it after this many unanswered pings: a connection whose peer vanished
// goes within about 30 s.
const (
	authPingInterval = 10 * time.Second
	authMaxPingsOut  = 2
)

// Start starts a NATS server in this process and returns once it
// accepts connections. It fails at once, with the reason, if it cannot
// listen (port in use).
func Start(opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Port <= 0 {
		o.Port = natsserver.RANDOM_PORT
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.Name == "" {
		o.Name = "saint"
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 10 * time.Second
	}
	nopts := &natsserver.Options{
		ServerName: o.Name,
		Host:       o.Host,
		Port:       o.Port,
		MaxPayload: o.MaxPayload,
		// An embedded server must not take over the process's signals.
		NoSigs: true,
	}
	if o.Authentication != nil {
		nopts.CustomClientAuthentication = o.Authentication
		// Clients prove their nkey by signing this nonce.
		nopts.AlwaysEnableNonce = true
		// An unadopted node's id is held by its key while the key has a
		// connection open (server/busaccess): a connection whose peer lost
		// power must go within seconds, not NATS's default of minutes.
		nopts.PingInterval = authPingInterval
		nopts.MaxPingsOut = authMaxPingsOut
	}
	if o.TLS != nil {
		nopts.TLSConfig = o.TLS
		nopts.TLS = true
		nopts.TLSTimeout = 2
	}
	ns, err := natsserver.NewServer(nopts)
	if err != nil {
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	// Always install our logger: nats-server reports a failure to listen
	// only through Fatalf, and its default logger exits the process there.
	lg := &serverLog{fatal: make(chan string, 1)}
	if o.Logger != nil {
		lg.log = o.Logger.With("component", "nats-server")
	} else {
		lg.log = slog.New(slog.DiscardHandler)
	}
	ns.SetLoggerV2(lg, false, false, false)
	ns.Start()

	for deadline := time.Now().Add(o.ReadyTimeout); ; {
		select {
		case msg := <-lg.fatal:
			ns.Shutdown()
			return nil, fmt.Errorf("natsbus: starting server on %s: %s", net.JoinHostPort(o.Host, fmt.Sprint(o.Port)), msg)
		default:
		}
		if ns.ReadyForConnections(50 * time.Millisecond) {
			return &Server{ns: ns}, nil
		}
		if time.Now().After(deadline) {
			ns.Shutdown()
			return nil, errors.New("natsbus: server not ready for connections")
		}
	}
}

// ClientURL is the URL clients Connect to, e.g. "nats://127.0.0.1:4222",
// with or without TLS: a client configured for TLS upgrades the
// connection as the server asks, whatever the scheme.
func (s *Server) ClientURL() string {
	return strings.Replace(s.ns.ClientURL(), "tls://", "nats://", 1)
}

// Port is the port the server listens on (the one picked, if Port was 0).
func (s *Server) Port() int { return s.ns.Addr().(*net.TCPAddr).Port }

// NumClients is how many clients are connected.
func (s *Server) NumClients() int { return s.ns.NumClients() }

// NATS returns the underlying server, for monitoring and for growing the
// broker (clustering, leaf nodes) beyond what Options offers.
func (s *Server) NATS() *natsserver.Server { return s.ns }

// Shutdown stops the server, disconnecting its clients, and waits until it
// has stopped. Clients made with Connect keep trying to reconnect.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// serverLog adapts slog to nats-server's Logger.
type serverLog struct {
	log   *slog.Logger
	fatal chan string
}

func (l *serverLog) Noticef(format string, v ...any) { l.log.Info(fmt.Sprintf(format, v...)) }
func (l *serverLog) Warnf(format string, v ...any)   { l.log.Warn(fmt.Sprintf(format, v...)) }
func (l *serverLog) Errorf(format string, v ...any)  { l.log.Error(fmt.Sprintf(format, v...)) }
func (l *serverLog) Debugf(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l *serverLog) Tracef(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }

// Fatalf logs and reports the error to Start instead of exiting.
func (l *serverLog) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.log.Error(msg)
	select {
	case l.fatal <- msg:
	default:
	}
}
