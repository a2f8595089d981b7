package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// readyTimeout bounds one /readyz check.
const readyTimeout = 5 * time.Second

// Server serves /metrics (Prometheus' text exposition format), /healthz
// (200 while the process serves HTTP at all) and /readyz (200 when
// Sources.Ready finds nothing wrong, 503 with the reason otherwise).
type Server struct {
	http *http.Server
	ln   net.Listener
	done chan struct{}
}

// Registry returns a registry with the event metrics, Go's runtime and
// process metrics, and src's scrape-time values.
func Registry(src Sources) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(eventCollectors()...)
	reg.MustRegister(&sourceCollector{src: src})
	return reg
}

// Listen starts serving on addr (host:port). Without a host (":9187") it
// listens on loopback only: the metrics are not authenticated, so serving
// other machines takes naming an address ("0.0.0.0:9187"). An address that
// cannot be bound — in use, not ours — fails here, with the address named.
func Listen(addr string, src Sources, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	addr = loopbackByDefault(addr)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(Registry(src), promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn), ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if src.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
			err := src.Ready(ctx)
			cancel()
			if err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintln(w, "not ready:", err)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	s := &Server{http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan struct{})}
	safego.Go(func() {
		defer close(s.done)
		if err := safego.Call(func() error { return s.http.Serve(ln) }); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "listen", addr, "err", err)
		}
	})
	return s, nil
}

// loopbackByDefault gives an address without a host the loopback host.
func loopbackByDefault(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr // net.Listen reports a malformed one
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// Addr is the address served.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops serving, waiting for requests in progress until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	<-s.done
	return err
}
