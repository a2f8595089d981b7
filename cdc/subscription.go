package cdc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CreateSpec is a CREATE SUBSCRIPTION statement.
type CreateSpec struct {
	Name         string
	Connection   string
	Publications []string
	// Options are the WITH options, by lower-case name, as text.
	Options map[string]string
}

// Options of CREATE SUBSCRIPTION … WITH (…) and their defaults.
const (
	defaultBuckets        = 4
	defaultCommitInterval = time.Second
)

// isMySQL reports whether a CONNECTION names a MySQL/MariaDB source.
func isMySQL(conn string) bool { return strings.HasPrefix(conn, "mysql://") }

// Create checks the source (it must be reachable with replication rights,
// its publications must exist) and registers the subscription; its
// worker takes the initial copy. Nothing is left behind when it fails.
func Create(ctx context.Context, env *Env, spec CreateSpec) error {
	sub := &catalog.Subscription{
		Name: spec.Name, Connection: spec.Connection, Publications: spec.Publications,
		HashBucketNum: defaultBuckets, CopyData: true, Enabled: true, CommitInterval: defaultCommitInterval,
	}
	if spec.Name == "" || len(spec.Publications) == 0 {
		return sqlerr.New(sqlerr.SyntaxError, "CREATE SUBSCRIPTION needs a name, a CONNECTION and a PUBLICATION")
	}
	for k, v := range spec.Options {
		var err error
		switch k {
		case "target_schema":
			sub.TargetSchema = v
		case "hash_bucket_num":
			sub.HashBucketNum, err = strconv.Atoi(v)
			if err == nil && sub.HashBucketNum < 1 {
				err = fmt.Errorf("must be positive")
			}
		case "copy_data":
			sub.CopyData, err = parseBool(v)
		case "enabled":
			sub.Enabled, err = parseBool(v)
		case "commit_interval":
			sub.CommitInterval, err = parseInterval(v)
		default:
			return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: fmt.Sprintf("unrecognized subscription parameter: %q", k),
				Hint: "supported: target_schema, hash_bucket_num, copy_data, enabled, commit_interval"}
		}
		if err != nil {
			return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for subscription parameter %s: %q (%v)", k, v, err)
		}
	}
	var tables []sourceTable
	if isMySQL(spec.Connection) {
		sub.Kind = "mysql"
		u, err := url.Parse(spec.Connection)
		if err != nil {
			return sqlerr.New(sqlerr.SyntaxError, "invalid connection string: a mysql://user:password@host:port URL")
		}
		sub.Source = u.Redacted()
		if tables, err = checkMySQL(ctx, spec.Connection, spec.Publications); err != nil {
			return err
		}
		if sub.TargetSchema == "" {
			if len(spec.Publications) != 1 {
				return sqlerr.New(sqlerr.InvalidParameterValue, "target_schema is required when a subscription takes several databases")
			}
			sub.TargetSchema = spec.Publications[0]
		}
	} else {
		sub.Kind = "postgres"
		cfg, err := pgConfig(spec.Connection, false)
		if err != nil {
			return err
		}
		sub.Source = fmt.Sprintf("host=%s port=%d dbname=%s user=%s", cfg.Host, cfg.Port, cfg.Database, cfg.User)
		check, err := checkPG(ctx, spec.Connection, spec.Publications)
		if err != nil {
			return err
		}
		if sub.TargetSchema == "" {
			sub.TargetSchema = check.database
		}
		tables = check.tables
		sub.SlotName = "lakesoul_" + randomHex(8)
	}
	if err := checkTargetNames(tables); err != nil {
		return err
	}
	for _, t := range tables {
		sub.SubscriptionRows = append(sub.SubscriptionRows, catalog.SubscriptionTable{SourceTable: t.key(), TableName: t.Name})
	}
	return env.Catalog.CreateSubscription(ctx, sub)
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "on", "1", "yes":
		return true, nil
	case "false", "off", "0", "no":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean")
}

// parseInterval reads '1s', '500ms', '2 seconds' or a number of
// milliseconds.
func parseInterval(v string) (time.Duration, error) {
	v = strings.TrimSpace(strings.ToLower(v))
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(n) * time.Millisecond, nil
	}
	for _, u := range []struct{ long, short string }{{" seconds", "s"}, {" second", "s"}, {" milliseconds", "ms"}, {" minutes", "m"}, {" minute", "m"}} {
		if n, ok := strings.CutSuffix(v, u.long); ok {
			v = strings.TrimSpace(n) + u.short
		}
	}
	d, err := time.ParseDuration(v)
	if err == nil && (d < 10*time.Millisecond || d > time.Hour) {
		err = fmt.Errorf("must be between 10ms and 1h")
	}
	return d, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Alter runs ALTER SUBSCRIPTION name action: "enable", "disable" or
// "refresh" (REFRESH PUBLICATION: the worker restarts its run and picks up
// the publications' new tables).
func Alter(ctx context.Context, env *Env, name, action string) error {
	switch action {
	case "enable", "disable":
		return env.Catalog.SetSubscriptionEnabled(ctx, name, action == "enable")
	case "refresh":
		return refresh(ctx, env, name)
	}
	return sqlerr.Unsupported("ALTER SUBSCRIPTION "+strings.ToUpper(action), "ENABLE, DISABLE, REFRESH PUBLICATION")
}

// Drop runs DROP SUBSCRIPTION: the subscription is gone from the catalog
// (its worker stops) and its replication slot from the source. Its lake
// tables stay.
func Drop(ctx context.Context, env *Env, name string, missingOK bool) error {
	sub, err := env.Catalog.SubscriptionByName(ctx, name)
	if err != nil {
		if missingOK && sqlerr.Code(err) == sqlerr.UndefinedObject {
			return nil
		}
		return err
	}
	if sub.Kind == "postgres" && sub.SlotName != "" {
		// First the slot: a subscription whose slot cannot be dropped (the
		// source is down) stays, as PostgreSQL's DROP SUBSCRIPTION fails.
		// Its worker may still stream from it; dropSlotPG ends that walsender.
		if err := env.Catalog.SetSubscriptionEnabled(ctx, name, false); err != nil {
			return err
		}
		if err := dropSlotPG(ctx, sub.Connection, sub.SlotName); err != nil {
			_ = env.Catalog.SetSubscriptionEnabled(context.WithoutCancel(ctx), name, sub.Enabled)
			return fmt.Errorf("drop subscription %s: %w", name, err)
		}
	}
	_, err = env.Catalog.DeleteSubscription(ctx, name)
	return err
}

// refresh registers the publications' tables the subscription does not
// know yet and restarts its worker's run, which copies them.
func refresh(ctx context.Context, env *Env, name string) error {
	sub, err := env.Catalog.SubscriptionByName(ctx, name)
	if err != nil {
		return err
	}
	if !sub.Enabled {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "ALTER SUBSCRIPTION ... REFRESH is not allowed for disabled subscriptions")
	}
	var tables []sourceTable
	if sub.Kind == "mysql" {
		tables, err = checkMySQL(ctx, sub.Connection, sub.Publications)
	} else {
		var check *pgCheck
		if check, err = checkPG(ctx, sub.Connection, sub.Publications); err == nil {
			tables = check.tables
		}
	}
	if err != nil {
		return err
	}
	if err := checkTargetNames(tables); err != nil {
		return err
	}
	for _, t := range tables {
		row := catalog.SubscriptionTable{SourceTable: t.key(), Namespace: sub.TargetSchema, TableName: t.Name}
		if _, err := env.Catalog.AddSubscriptionTable(ctx, name, row); err != nil {
			return err
		}
	}
	return env.Catalog.BumpSubscription(ctx, name)
}
