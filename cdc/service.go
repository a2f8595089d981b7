package cdc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Service applies subscriptions inside a server: Workers subscriptions at
// once, each leased in the catalog (lakesoul.cdc_claim), so that of all the
// servers sharing a catalog exactly one applies a subscription, and another
// takes it over once the holder's lease ran out (it died, or lost the
// catalog).
type Service struct {
	env    *Env
	id     string
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// poll is how often an idle worker looks for a subscription to take
	// without a notification (a lease that ran out is found this way).
	poll time.Duration
	wake chan struct{}
}

// NotifyChannel is the catalog channel on which subscription changes
// (CREATE, ENABLE, REFRESH) wake idle workers.
const NotifyChannel = catalog.SubscriptionsChannel

// Start starts n workers (n < 1: none, nil Service).
func Start(ctx context.Context, env *Env, n int) *Service {
	if n < 1 {
		return nil
	}
	host, _ := os.Hostname()
	s := &Service{env: env, id: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8]),
		poll: min(5*time.Second, env.lease()/2), wake: make(chan struct{}, n)}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.wg.Add(1)
	safego.Go(func() { s.listen(ctx) })
	for i := 0; i < n; i++ {
		s.wg.Add(1)
		safego.Go(func() {
			defer s.wg.Done()
			s.work(ctx)
		})
	}
	return s
}

// Close stops the workers and gives their subscriptions up.
func (s *Service) Close() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
}

// listen wakes idle workers on notifications of NotifyChannel, on a
// connection of its own, reconnecting after failures.
func (s *Service) listen(ctx context.Context) {
	defer s.wg.Done()
	wait := time.Second
	for ctx.Err() == nil {
		// A panic is a failure like another: reconnect.
		err := safego.Call(func() error { return s.listenOnce(ctx) })
		if ctx.Err() != nil {
			return
		}
		s.env.logger().Warn("subscription notification listener failed; reconnecting", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

func (s *Service) listenOnce(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, s.env.Catalog.Pool().Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return err
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		for i := 0; i < cap(s.wake); i++ {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

func (s *Service) work(ctx context.Context) {
	log := s.env.logger()
	for ctx.Err() == nil {
		name, token, err := s.env.Catalog.ClaimSubscription(ctx, s.id, s.env.lease())
		if err != nil && ctx.Err() == nil {
			log.Warn("subscription claim failed", "error", err)
		}
		if name == "" {
			select {
			case <-ctx.Done():
			case <-s.wake:
			case <-time.After(s.poll):
			}
			continue
		}
		log.Info("subscription claimed", "subscription", name, "worker", s.id)
		// A panic ends this hold alone; the subscription is released and
		// the worker goes on.
		if err := safego.Call(func() error { s.hold(ctx, name, token); return nil }); err != nil {
			log.Error("subscription worker panicked", "subscription", name, "err", err)
		}
		_ = s.env.Catalog.ReleaseSubscription(context.WithoutCancel(ctx), name, token)
		log.Info("subscription released", "subscription", name, "worker", s.id)
	}
}

// hold applies one subscription while the lease lasts: runs, restarted
// after errors with backoff (the state shows error and last_error
// meanwhile), and after a change of generation (ENABLE, REFRESH).
func (s *Service) hold(ctx context.Context, name string, token uuid.UUID) {
	log := s.env.logger()
	lease := s.env.lease()
	gen, ok, err := s.env.Catalog.RenewSubscription(ctx, name, token, lease)
	if err != nil || !ok {
		return
	}
	hctx, lost := context.WithCancel(ctx)
	defer lost()
	restart := make(chan struct{}, 1)
	safego.Go(func() { // the lease: renewed every lease/3; lost or stale ends the hold
		// Without renewals the lease is as good as lost.
		defer safego.RecoverTo(func(error) { lost() })
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		failures := 0
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
			}
			g, ok, err := s.env.Catalog.RenewSubscription(hctx, name, token, lease)
			switch {
			case err != nil:
				// The catalog is unreachable: the lease may run out, and
				// then another server's commits win (cdc_commit checks the
				// token), so stop before that.
				if failures++; time.Duration(failures)*lease/3 >= lease*2/3 {
					lost()
					return
				}
			case !ok:
				lost()
				return
			default:
				failures = 0
				if g != gen {
					gen = g
					select {
					case restart <- struct{}{}:
					default:
					}
				}
			}
		}
	})
	backoff := time.Second
	for hctx.Err() == nil {
		rctx, cancel := context.WithCancel(hctx)
		done := make(chan error, 1)
		// A panic fails the run like an error: retried after the backoff.
		safego.Go(func() { done <- safego.Call(func() error { return s.run(rctx, name, token) }) })
		var err error
		select {
		case err = <-done:
		case <-restart:
			cancel()
			err = <-done
			err = nil
		}
		cancel()
		if hctx.Err() != nil {
			return
		}
		switch {
		case err == nil, errors.Is(err, errResync):
			backoff = time.Second
			continue
		}
		if _, ok, rerr := s.env.Catalog.RenewSubscription(hctx, name, token, lease); rerr == nil && !ok {
			return // dropped, disabled or taken over: that is why the run ended
		}
		log.Warn("subscription run failed", "subscription", name, "error", err, "retry_in", backoff)
		msg := sqlerr.From(err).Message
		if se := sqlerr.From(err); se.Code == sqlerr.InternalError {
			msg = err.Error()
		}
		_, _ = s.env.Catalog.SetSubscriptionState(hctx, name, token, "error", msg, "")
		select {
		case <-hctx.Done():
			return
		case <-restart:
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// run is one run of a subscription: the initial copy when the lake holds
// none yet, the copy of tables that joined, then streaming until an error
// or ctx ends.
func (s *Service) run(ctx context.Context, name string, token uuid.UUID) error {
	sub, err := s.env.Catalog.SubscriptionByName(ctx, name)
	if err != nil {
		return err
	}
	a := newApplier(s.env, sub, token)
	defer func() { // the open batch of a run that ended is not committed
		a.batch.abort(ctx)
		a.batch.release(ctx)
	}()
	if err := a.loadTables(ctx); err != nil {
		return err
	}
	if sub.Kind == "mysql" {
		if a.position == "" {
			if _, err := s.env.Catalog.SetSubscriptionState(ctx, name, token, "copying", "", ""); err != nil {
				return err
			}
			if err := a.myCopy(ctx); err != nil {
				return err
			}
		}
		if _, err := s.env.Catalog.SetSubscriptionState(ctx, name, token, "streaming", "", ""); err != nil {
			return err
		}
		return a.myStream(ctx)
	}
	if a.position == "" {
		if _, err := s.env.Catalog.SetSubscriptionState(ctx, name, token, "copying", "", ""); err != nil {
			return err
		}
		if err := a.pgCopy(ctx); err != nil {
			return err
		}
	} else if err := a.pgSyncTables(ctx); err != nil {
		return err
	}
	if _, err := s.env.Catalog.SetSubscriptionState(ctx, name, token, "streaming", "", ""); err != nil {
		return err
	}
	return a.pgStream(ctx)
}
