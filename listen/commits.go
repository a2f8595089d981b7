package listen

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// Commit is the payload a session receives on lakesoul_commits for one
// committed table version: CommitNotice without the workspace.
type Commit struct {
	Table              string `json:"table"`
	TableID            string `json:"table_id"`
	Partition          string `json:"partition"`
	Version            int    `json:"version"`
	CommitOp           string `json:"commit_op"`
	CommittedAt        string `json:"committed_at"`
	PartitionTruncated bool   `json:"partition_truncated,omitempty"`
}

// follow LISTENs on the catalog's commit channel on a connection of its
// own and fans the notices out, reconnecting after failures. Notices sent
// while it was not connected are lost: they are hints, and a follower
// reading lakesoul.changes from where it was catches up on the next one.
func (h *Hub) follow() {
	defer h.wg.Done()
	wait := time.Second
	for h.ctx.Err() == nil {
		err := safego.Call(h.followOnce) // a panic is a failure like another: reconnect
		if h.ctx.Err() != nil {
			return
		}
		h.log.Warn("listen: commit notice listener failed; reconnecting", "err", err)
		select {
		case <-h.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

func (h *Hub) followOnce() error {
	cfg := h.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = catalog.CommitListenerApp
	conn, err := pgx.ConnectConfig(h.ctx, cfg)
	if err != nil {
		h.setFollowErr(err)
		return err
	}
	defer conn.Close(context.WithoutCancel(h.ctx))
	if _, err := conn.Exec(h.ctx, "LISTEN "+catalog.CommitChannel); err != nil {
		h.setFollowErr(err)
		return err
	}
	h.setFollowErr(nil)
	// Committers look for listeners once per ListenerCheckEvery.
	time.AfterFunc(catalog.ListenerCheckEvery+100*time.Millisecond, safego.Guard(func() { h.readyOnce.Do(func() { close(h.ready) }) }))
	for {
		n, err := conn.WaitForNotification(h.ctx)
		if err != nil {
			return err
		}
		var notices []catalog.CommitNotice
		if err := json.Unmarshal([]byte(n.Payload), &notices); err != nil {
			h.log.Warn("listen: malformed commit notice", "err", err)
			continue
		}
		h.fanOut(notices)
	}
}

// fanOut delivers each notice to the sessions listening on lakesoul_commits
// whose role sees its table; a session whose queue is full misses it
// (queue.go).
func (h *Hub) fanOut(notices []catalog.CommitNotice) {
	ls := h.listenersOf(CommitsChannel)
	if len(ls) == 0 {
		return
	}
	dropped := 0
	for _, n := range notices {
		b, err := json.Marshal(Commit{Table: n.Table, TableID: n.TableID, Partition: n.Partition, Version: n.Version,
			CommitOp: n.CommitOp, CommittedAt: n.CommittedAt, PartitionTruncated: n.PartitionTruncated})
		if err != nil {
			continue
		}
		for _, l := range ls {
			if h.vis.sees(h.ctx, l.role, n.Domain) && !h.offer(l, Notification{Channel: CommitsChannel, Payload: string(b), PID: l.pid}) {
				dropped++
			}
		}
	}
	if dropped > 0 {
		h.log.Warn("listen: commit notices dropped for sessions whose notification queue is full", "dropped", dropped)
	}
}
