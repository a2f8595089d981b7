package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// settings are a session's run-time parameters, keyed by lower-case name.
type settings map[string]setting

type setting struct {
	name  string // canonical spelling, as SHOW and ParameterStatus use it
	value string
}

// ServerVersion is the PostgreSQL version the server reports: a 16.x
// version, whose client-side behaviour (psql's describe queries, pgjdbc's
// startup) the pg_catalog emulation is tested with. The catalog queries
// themselves run on the catalog PostgreSQL (15 or later); pgcatalog rewrites
// their version() and current_setting('server_version[_num]') to the same
// values, so every way of asking agrees.
const (
	ServerVersion    = pgcatalog.ServerVersion
	ServerVersionNum = pgcatalog.ServerVersionNum
)

// reported are the parameters PostgreSQL reports in ParameterStatus.
var reported = []string{"server_version", "server_encoding", "client_encoding", "application_name",
	"DateStyle", "TimeZone", "integer_datetimes", "standard_conforming_strings", "IntervalStyle",
	"is_superuser", "session_authorization"}

func (s *Session) defaultSettings(params map[string]string) settings {
	st := settings{}
	set := func(name, v string) { st[strings.ToLower(name)] = setting{name: name, value: v} }
	set("server_version", ServerVersion)
	set("server_version_num", ServerVersionNum)
	if s.claimed[0] != "" { // a dump tool's session (dumpversion.go)
		set("server_version", s.claimed[0])
		set("server_version_num", s.claimed[1])
	}
	set("server_encoding", "UTF8")
	set("client_encoding", "UTF8")
	set("application_name", "")
	set("DateStyle", "ISO, MDY")
	set("TimeZone", "UTC")
	set("integer_datetimes", "on")
	set("standard_conforming_strings", "on")
	set("IntervalStyle", "postgres")
	set("is_superuser", boolSetting(s.superuser))
	set("session_authorization", s.user)
	set("search_path", `"$user", public`)
	set("extra_float_digits", "1")
	set("statement_timeout", "0")
	set("lock_timeout", "0")
	set(idleInTransactionSetting, formatMillisSetting(s.e.cfg.IdleInTransactionTimeout)) // sessionlimits.go
	// The current transaction's characteristics follow the defaults
	// (txmode.go): PostgreSQL's, or the startup parameters'.
	set("default_transaction_isolation", "read committed")
	set("default_transaction_read_only", "off")
	set("max_identifier_length", "63")
	set("lc_messages", "C")
	set("client_min_messages", "notice")
	for k, v := range params {
		switch lk := strings.ToLower(k); {
		case lk == "user", lk == "database", lk == "options", lk == "replication", lk == "client_encoding":
		case readOnlySettings[lk]:
			// Facts about the server and the role: a startup parameter
			// cannot change them.
		default:
			if cur, ok := st[lk]; ok {
				set(cur.name, v)
			} else {
				set(k, v)
			}
		}
	}
	for _, name := range []string{"transaction_isolation", "transaction_read_only"} {
		set(name, st["default_"+name].value)
	}
	return st
}

func boolSetting(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// ParameterStatus implements pgwire.Session.
func (s *Session) ParameterStatus() map[string]string {
	out := make(map[string]string, len(reported))
	for _, n := range reported {
		out[n] = s.settings[strings.ToLower(n)].value
	}
	return out
}

// searchPath returns the lake namespaces unqualified names resolve in.
func (s *Session) searchPath() []string {
	schemas := s.searchPathSchemas()
	out := make([]string, len(schemas))
	for i, sc := range schemas {
		out[i] = pgcatalog.Namespace(sc)
	}
	return out
}

// searchPathSchemas returns the search path's schemas as the PostgreSQL
// face names them (public first by default); "$user" names no lake
// namespace and is skipped.
func (s *Session) searchPathSchemas() []string {
	var out []string
	for _, p := range strings.Split(s.settings["search_path"].value, ",") {
		p = strings.Trim(strings.TrimSpace(p), `"`)
		if p != "" && p != "$user" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = []string{pgcatalog.PublicSchema}
	}
	return out
}

// readOnlySettings cannot be changed by SET.
var readOnlySettings = map[string]bool{"server_version": true, "server_version_num": true, "server_encoding": true, "integer_datetimes": true,
	"is_superuser": true, "max_identifier_length": true, "session_authorization": true}

func (s *Session) planSet(n *pg_query.VariableSetStmt) (pgwire.Statement, error) {
	name := strings.ToLower(n.Name)
	switch name {
	case "role":
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "SET ROLE is not allowed: sessions run as the role they logged in with")
	case "session_authorization":
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "SET SESSION AUTHORIZATION is not allowed")
	case "transaction", "session characteristics":
		return s.planSetTransaction(n) // txmode.go
	case "transaction_snapshot":
		return &funcStmt{tag: "SET", run: func(context.Context, []any) (string, [][]any, error) { return "SET", nil, nil }}, nil
	}
	if readOnlySettings[name] {
		return nil, sqlerr.New("55P02", "parameter %q cannot be changed", n.Name)
	}
	if !s.knownSetting(name) {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", n.Name)
	}
	var value string
	switch n.Kind {
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		parts := make([]string, 0, len(n.Args))
		for _, a := range n.Args {
			if name == "timezone" && isIntervalCast(a) {
				// SET TIME ZONE INTERVAL '…' [range]: a fixed offset.
				east, err := timeZoneInterval(a.GetTypeCast())
				if err != nil {
					return nil, err
				}
				parts = append(parts, pgwire.OffsetTimeZone(east))
				continue
			}
			v, ok := stringValue(a)
			if !ok {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q", n.Name)
			}
			parts = append(parts, v)
		}
		value = strings.Join(parts, ", ")
	case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
		value = s.defaultSettings(nil)[name].value
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		return &funcStmt{tag: "RESET", run: func(context.Context, []any) (string, [][]any, error) {
			s.resetAllSettings() // txsettings.go
			return "RESET", nil, nil
		}}, nil
	default:
		value = s.defaultSettings(nil)[name].value
	}
	if name == "client_encoding" && !strings.EqualFold(strings.ReplaceAll(value, "-", ""), "UTF8") && !strings.EqualFold(value, "unicode") {
		return nil, sqlerr.Unsupported("client_encoding "+value, "only UTF8 is supported")
	}
	value, err := validateSetting(name, value)
	if err != nil {
		return nil, err
	}
	tag := "SET"
	reset := n.Kind == pg_query.VariableSetKind_VAR_RESET || n.Kind == pg_query.VariableSetKind_VAR_SET_DEFAULT
	if n.Kind == pg_query.VariableSetKind_VAR_RESET {
		tag = "RESET"
	}
	return &funcStmt{tag: tag, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		canon := n.Name
		if cur, ok := s.settings[name]; ok {
			canon = cur.name
		}
		if name == "client_encoding" {
			value = "UTF8"
		}
		switch name {
		case "transaction_isolation", "transaction_read_only":
			// SET TRANSACTION's spelling: the open block's, else no effect.
			if s.inBlock {
				if err := s.checkTxChange(txOption{name, value}); err != nil {
					return "", nil, err
				}
				s.setTx(name, value)
			}
			return tag, nil, nil
		}
		if reset && !n.IsLocal && !strings.Contains(name, ".") {
			if _, kept := s.defaultSettings(nil)[name]; !kept {
				// A parameter the session keeps only because it was SET:
				// RESET gives SHOW back the catalog's value.
				s.changeSetting()
				delete(s.settings, name)
				s.settingsChanged()
				return tag, nil, nil
			}
		}
		s.assignSetting(ctx, name, setting{name: canon, value: value}, n.IsLocal) // txsettings.go
		if strings.HasPrefix(name, "default_transaction_") && !s.inBlock {
			s.resetTx()
		}
		return tag, nil, nil
	}}, nil
}

func (s *Session) planShow(ctx context.Context, n *pg_query.VariableShowStmt) (pgwire.Statement, error) {
	name := strings.ToLower(n.Name)
	if name == "all" {
		return s.planShowAll(), nil
	}
	if name == "time zone" {
		name = "timezone"
	}
	if _, ok := s.settings[name]; !ok {
		return s.planShowCatalogSetting(ctx, n.Name)
	}
	return &funcStmt{
		tag: "SHOW",
		// The column is named as the setting is (SHOW timezone: TimeZone).
		cols: []pgwire.Column{{Name: s.settings[name].name, TypeOID: schema.OIDText, TypeSize: -1, TypeModifier: -1}},
		run: func(context.Context, []any) (string, [][]any, error) {
			return "SHOW", [][]any{{s.settings[name].value}}, nil
		},
	}, nil
}

// planTransaction handles BEGIN/COMMIT/ROLLBACK. Writes inside a block are
// staged and commit together at COMMIT, or not at all (txn.go). Savepoints
// are savepoint.go's.
func (s *Session) planTransaction(n *pg_query.TransactionStmt) (pgwire.Statement, error) {
	run := func(fn func(ctx context.Context) (string, error)) (pgwire.Statement, error) {
		tag := "COMMIT"
		switch n.Kind {
		case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
			tag = "BEGIN"
		case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
			tag = "ROLLBACK"
		}
		return &funcStmt{tag: tag, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
			t, err := fn(ctx)
			return t, nil, err
		}}, nil
	}
	switch n.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
		opts, err := txOptions(n.Options)
		if err != nil {
			return nil, err
		}
		return run(func(ctx context.Context) (string, error) {
			if !s.inBlock {
				s.beginTx(opts)
				return "BEGIN", nil
			}
			if s.implicit {
				// The implicit transaction becomes the block, with the
				// statements before BEGIN in it (implicittx.go).
				s.implicit = false
			} else {
				alreadyInTransactionWarning(ctx)
			}
			for _, o := range opts {
				if err := s.checkTxChange(o); err != nil {
					return "", err
				}
				s.setTx(o.name, o.value)
			}
			return "BEGIN", nil
		})
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
		return run(func(ctx context.Context) (string, error) {
			if !s.explicitBlock() {
				noTransactionWarning(ctx)
			}
			return s.commitBlock(ctx)
		})
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		return run(func(ctx context.Context) (string, error) {
			if !s.explicitBlock() {
				noTransactionWarning(ctx)
			}
			s.rollbackBlock(ctx)
			return "ROLLBACK", nil
		})
	case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT, pg_query.TransactionStmtKind_TRANS_STMT_RELEASE,
		pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return s.planSavepoint(n) // savepoint.go
	}
	return nil, sqlerr.Unsupported("this transaction command", "BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO")
}

// commitBlock ends the transaction block with COMMIT: its staged writes and
// DDL commit together, or not at all; a failed block rolls back. It returns
// the command tag.
func (s *Session) commitBlock(ctx context.Context) (string, error) {
	// The block's advisory transaction locks end with it, whatever its
	// outcome (advisory.go).
	defer s.endBlockAdvisory(ctx)
	if s.failed {
		// COMMIT of a failed block rolls back, as in PostgreSQL.
		s.rollbackBlock(ctx)
		return "ROLLBACK", nil
	}
	// Cursors without WITH HOLD end with the block; the WITH HOLD cursors
	// it declared are materialised before it commits, and their failure
	// aborts it (cursor.go).
	s.closeCursors(false)
	if err := s.persistCursors(ctx); err != nil {
		s.rollbackBlock(ctx)
		return "", err
	}
	// The block's NOTIFYs must fit the queues before anything commits
	// (listen.go); sent after the commit, dropped if it fails.
	pending, err := s.prepareBlockNotifies()
	if err != nil {
		s.rollbackBlock(ctx)
		return "", err
	}
	defer pending.Cancel() // nothing after Send
	listens := s.blockListens
	s.blockNotifies, s.blockListens = nil, nil
	s.inBlock, s.implicit, s.wroteInBlock = false, false, false
	s.endSnapshot(ctx) // txsnapshot.go
	staged, err := s.commitStaged(ctx)
	s.endSavepoints(ctx, staged) // savepoint.go
	if err != nil {
		_ = s.endBlockDDL(ctx, false, nil)
		s.endTempTransaction(ctx, false)
		s.endBlockSettings(false)
		s.endBlockTempFuncs(false)
		s.endBlockCursors(false)
		return "", err
	}
	// The block's DDL and its staged writes commit together (ddltx.go).
	if err := s.endBlockDDL(ctx, true, staged); err != nil {
		s.endTempTransaction(ctx, false)
		s.endBlockSettings(false)
		s.endBlockTempFuncs(false)
		s.endBlockCursors(false)
		return "", err
	}
	s.endBlockCursors(true)           // cursor.go
	s.endBlockSettings(true)          // txsettings.go
	s.endBlockTempFuncs(true)         // tempfunc.go
	s.applyBlockListens(ctx, listens) // listen.go
	pending.Send()
	s.endTempTransaction(ctx, true) // temptable.go
	return "COMMIT", nil
}

// rollbackBlock ends the transaction block with ROLLBACK.
func (s *Session) rollbackBlock(ctx context.Context) {
	s.inBlock, s.implicit, s.failed, s.wroteInBlock = false, false, false, false
	s.blockNotifies, s.blockListens = nil, nil
	s.endBlockAdvisory(ctx) // advisory.go
	s.endSnapshot(ctx)      // txsnapshot.go
	s.endTempTransaction(ctx, false)
	s.endBlockSettings(false)
	s.endBlockTempFuncs(false)
	s.endBlockCursors(false)
	s.discardStaged(ctx)
	s.endSavepoints(ctx, nil)
	_ = s.endBlockDDL(ctx, false, nil)
}

// knownSetting reports whether SET accepts name: a setting the session
// keeps, a custom one ("prefix.name"), or one of PostgreSQL's configuration
// parameters, as the catalog's PostgreSQL lists them (a SET of one the
// session does not keep only records its value for SHOW). Should the list
// not load, every name is accepted.
func (s *Session) knownSetting(name string) bool {
	if _, ok := s.settings[name]; ok || strings.Contains(name, ".") {
		return true
	}
	s.e.settingNamesOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		names, err := s.e.cat.SettingNames(ctx)
		if err != nil {
			s.e.log.Warn("configuration parameter names not loaded; SET accepts every name", "err", err)
			return
		}
		s.e.settingNames = names
	})
	return s.e.settingNames == nil || s.e.settingNames[name]
}

// validateSetting checks and normalises a value given to SET.
func validateSetting(name, value string) (string, error) {
	bad := func() (string, error) {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, value)
	}
	switch name {
	case "timezone":
		return canonicalTimeZone(value)
	case "datestyle":
		v := strings.ToUpper(value)
		if !strings.Contains(v, "ISO") && v != "MDY" && v != "DMY" && v != "YMD" {
			return "", sqlerr.Unsupported("DateStyle "+value, "DateStyle ISO (with MDY, DMY or YMD order)")
		}
		order := "MDY"
		for _, o := range []string{"DMY", "YMD", "EURO", "EUROPEAN", "US", "NONEURO", "NONEUROPEAN"} {
			if strings.Contains(v, o) {
				order = map[string]string{"EURO": "DMY", "EUROPEAN": "DMY", "US": "MDY", "NONEURO": "MDY", "NONEUROPEAN": "MDY"}[o]
				if order == "" {
					order = o
				}
				break
			}
		}
		return "ISO, " + order, nil
	case "intervalstyle":
		v := strings.ToLower(strings.TrimSpace(value))
		if !slices.Contains(pgwire.IntervalStyles, v) {
			return "", &sqlerr.Error{Code: sqlerr.InvalidParameterValue,
				Message: fmt.Sprintf("invalid value for parameter %q: %q", name, value),
				Hint:    "Available values: " + strings.Join(pgwire.IntervalStyles, ", ") + "."}
		}
		return v, nil
	case "statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout":
		if _, ok := parseDurationSetting(value); !ok {
			return bad()
		}
	case "transaction_isolation", "default_transaction_isolation":
		v := strings.ToLower(strings.TrimSpace(value))
		if v == "default" {
			v = "read committed"
		}
		if !isolationLevels[v] {
			return bad()
		}
		return v, nil
	case "transaction_read_only", "default_transaction_read_only":
		switch strings.ToLower(strings.TrimSpace(value)) {
		case "on", "true", "yes", "1", "t", "y":
			return "on", nil
		case "off", "false", "no", "0", "f", "n":
			return "off", nil
		}
		return bad()
	case "ivfflat.probes":
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil || n < 1 || n > 32768 {
			return bad()
		}
	case "extra_float_digits":
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil || n < -15 || n > 3 {
			return bad()
		}
	}
	return value, nil
}

// isIntervalCast reports whether n is a cast to interval (SET TIME ZONE
// INTERVAL '…').
func isIntervalCast(n *pg_query.Node) bool {
	tc := n.GetTypeCast()
	return tc != nil && tc.TypeName != nil && typeNameString(tc.TypeName) == "interval"
}

// Interval range bits of an interval typmod (PostgreSQL's INTERVAL_MASK).
const (
	intervalMaskMonth  = 1 << 1
	intervalMaskYear   = 1 << 2
	intervalMaskDay    = 1 << 3
	intervalMaskHour   = 1 << 10
	intervalMaskMinute = 1 << 11
	intervalMaskSecond = 1 << 12
)

// timeZoneInterval reads the interval of SET TIME ZONE INTERVAL '…'
// [HOUR TO MINUTE …] as an offset in seconds east of UTC, as PostgreSQL
// does: hh[:mm[:ss]] or number-unit pairs of hours, minutes and seconds (a
// bare number counts in the range's last field, seconds without one);
// fields below the range's last are dropped; months and days are refused.
func timeZoneInterval(tc *pg_query.TypeCast) (int, error) {
	text, _ := stringValue(tc.Arg)
	mask := 0
	if len(tc.TypeName.Typmods) > 0 {
		if c := tc.TypeName.Typmods[0].GetAConst(); c != nil && c.GetIval() != nil {
			mask = int(c.GetIval().Ival)
		}
	}
	bad := func() (int, error) {
		return 0, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type interval: %q", text)
	}
	notAllowed := func(field string) (int, error) {
		return 0, &sqlerr.Error{Code: sqlerr.InvalidParameterValue,
			Message: fmt.Sprintf("invalid value for parameter %q: %q", "TimeZone", "INTERVAL '"+text+"'"),
			Detail:  fmt.Sprintf("Cannot specify %s in time zone interval.", field)}
	}
	unitSeconds := 1
	switch {
	case mask == 0 || mask&intervalMaskSecond != 0:
	case mask&intervalMaskMinute != 0:
		unitSeconds = 60
	case mask&intervalMaskHour != 0:
		unitSeconds = 3600
	case mask&intervalMaskDay != 0:
		return notAllowed("days")
	case mask&(intervalMaskMonth|intervalMaskYear) != 0:
		return notAllowed("months")
	}
	var total float64
	fields := strings.Fields(strings.ToLower(text))
	if len(fields) == 0 {
		return bad()
	}
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			sign := 1.0
			if f[0] == '-' || f[0] == '+' {
				if f[0] == '-' {
					sign = -1
				}
				f = f[1:]
			}
			parts := strings.Split(f, ":")
			if len(parts) > 3 {
				return bad()
			}
			secs := 0.0
			for j, p := range parts {
				v, err := strconv.ParseFloat(p, 64)
				if err != nil || p == "" || (j < len(parts)-1 && strings.Contains(p, ".")) {
					return bad()
				}
				secs += v * []float64{3600, 60, 1}[j]
			}
			total += sign * secs
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return bad()
		}
		unit := ""
		if i+1 < len(fields) {
			unit = fields[i+1]
			i++
		}
		switch strings.TrimSuffix(unit, "s") {
		case "":
			total += v * float64(unitSeconds)
		case "hour", "hr", "h":
			total += v * 3600
		case "minute", "min", "m":
			total += v * 60
		case "second", "sec":
			total += v
		case "day", "d", "week", "w":
			return notAllowed("days")
		case "month", "mon", "year", "y", "yr", "decade", "century", "millennium":
			return notAllowed("months")
		default:
			return bad()
		}
	}
	secs := int(total)
	switch unitSeconds {
	case 60, 3600:
		secs -= secs % unitSeconds // fields below the range are dropped
	}
	return secs, nil
}

// canonicalTimeZone checks a TimeZone value and returns it as PostgreSQL
// shows it (pgwire.TimeZoneLocation).
func canonicalTimeZone(value string) (string, error) {
	loc, ok := pgwire.TimeZoneLocation(value)
	if !ok {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q: %q", "TimeZone", value)
	}
	return loc.String(), nil
}

// timeZone is the session's TimeZone as a location (UTC if unknown).
func (s *Session) timeZone() *time.Location {
	if l, ok := pgwire.TimeZoneLocation(s.settings["timezone"].value); ok {
		return l
	}
	return time.UTC
}

// planShowAll answers SHOW ALL: name, setting, description.
// planShowCatalogSetting is SHOW of a setting the session does not keep:
// it shows what current_setting and pg_settings show for it — the
// catalog's value, for the parameters those let users see (the catalog's
// own addresses and paths they hide are 42704 here too).
func (s *Session) planShowCatalogSetting(ctx context.Context, name string) (pgwire.Statement, error) {
	call := &pg_query.FuncCall{Funcname: []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode("current_setting")},
		Args: []*pg_query.Node{pg_query.MakeAConstStrNode(name, -1)}, Funcformat: pg_query.CoercionForm_COERCE_EXPLICIT_CALL, Location: -1}
	sel := &pg_query.SelectStmt{TargetList: []*pg_query.Node{{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{
		Name: strings.ToLower(name), Val: &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: call}}, Location: -1}}}}}
	st, err := s.planCatalogQuery(ctx, &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}, nil)
	if err != nil {
		return nil, err
	}
	cols, err := st.Describe(ctx)
	if err != nil {
		return nil, err
	}
	return &funcStmt{tag: "SHOW", cols: cols, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		portal, err := st.Bind(ctx, nil)
		if err != nil {
			return "", nil, err
		}
		defer portal.Close()
		var rows rowsCollector
		if _, _, err := portal.Execute(ctx, 0, &rows); err != nil {
			return "", nil, err
		}
		return "SHOW", rows, nil
	}}, nil
}

func (s *Session) planShowAll() pgwire.Statement {
	text := func(n string) pgwire.Column {
		return pgwire.Column{Name: n, TypeOID: schema.OIDText, TypeSize: -1, TypeModifier: -1}
	}
	return &funcStmt{
		tag:  "SHOW",
		cols: []pgwire.Column{text("name"), text("setting"), text("description")},
		run: func(context.Context, []any) (string, [][]any, error) {
			names := make([]string, 0, len(s.settings))
			for _, st := range s.settings {
				names = append(names, st.name)
			}
			slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
			rows := make([][]any, len(names))
			for i, n := range names {
				rows[i] = []any{n, s.settings[strings.ToLower(n)].value, ""}
			}
			return "SHOW", rows, nil
		},
	}
}
