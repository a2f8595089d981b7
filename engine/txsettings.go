package engine

import (
	"context"
	"maps"
)

// Run-time settings in transaction blocks (explicit and implicit), as in
// PostgreSQL: SET inside a block lasts past COMMIT and is undone by
// ROLLBACK, by a failed block and by a failed COMMIT; ROLLBACK TO undoes
// the SETs after its savepoint; SET LOCAL lasts until the block ends,
// whichever way. Outside a block SET LOCAL and SET TRANSACTION have no
// effect and warn (25P01), as PostgreSQL's do. The current transaction's
// characteristics (transaction_isolation, transaction_read_only) are not
// kept here: every block starts and ends with the defaults (txmode.go).

// blockSettings is what the open block's SETs must restore.
type blockSettings struct {
	// before are the settings when the block started: nil until the
	// block's first SET, which copies them.
	before settings
	// local holds, for every setting the block changed with SET LOCAL, the
	// value it returns to at COMMIT (absent: the setting did not exist).
	local map[string]localPrior
}

type localPrior struct {
	v       setting
	existed bool
}

// changeSetting records that a SET is about to change the session's
// settings: inside a block, the settings before the block are kept once.
func (s *Session) changeSetting() {
	if s.inBlock && s.blockSet.before == nil {
		s.blockSet.before = maps.Clone(s.settings)
	}
}

// settingsChanged is called wherever a setting's value changes (SET, SET
// LOCAL, set_config, the block's end, ROLLBACK TO, RESET ALL): plans made
// before may depend on the values — current_setting folds them in when a
// statement is planned (currentsetting.go), the search path and time zone
// decide names and literals — so the kept plans are dropped (plancache.go)
// and the session's prepared statements are planned again at their next use
// (replan.go, nameGen).
func (s *Session) settingsChanged() {
	s.plans.clear()
	s.nameGen++
}

// assignSetting is a SET (local false) or SET LOCAL of name, both already
// validated, inside or outside a block.
func (s *Session) assignSetting(ctx context.Context, name string, v setting, local bool) {
	if local {
		if !s.warnNoTransactionBlock(ctx, "SET LOCAL") {
			return
		}
		if _, ok := s.blockSet.local[name]; !ok {
			prior, existed := s.settings[name]
			if s.blockSet.local == nil {
				s.blockSet.local = map[string]localPrior{}
			}
			s.blockSet.local[name] = localPrior{prior, existed}
		}
	} else {
		// A SET after a SET LOCAL of the block outlasts the block.
		delete(s.blockSet.local, name)
	}
	s.changeSetting()
	s.settings[name] = v
	s.settingsChanged()
}

// resetAllSettings is RESET ALL: every setting SET to its default.
func (s *Session) resetAllSettings() {
	s.changeSetting()
	s.blockSet.local = nil
	s.settings = s.defaultSettings(nil)
	s.settingsChanged()
}

// endBlockSettings ends the block for the settings: at COMMIT (committed)
// SET LOCAL values give way to the values before them, otherwise every
// setting returns to what it was before the block. Then the transaction
// characteristics return to the defaults.
func (s *Session) endBlockSettings(committed bool) {
	b := s.blockSet
	s.blockSet = blockSettings{}
	switch {
	case !committed && b.before != nil:
		s.settings = b.before
		s.settingsChanged()
	case committed && len(b.local) > 0:
		for name, p := range b.local {
			if p.existed {
				s.settings[name] = p.v
			} else {
				delete(s.settings, name)
			}
		}
		s.settingsChanged()
	}
	s.resetTx()
}

// settingsSavepoint is what ROLLBACK TO restores of the settings.
type settingsSavepoint struct {
	settings settings
	local    map[string]localPrior
}

func (s *Session) saveSettings() settingsSavepoint {
	return settingsSavepoint{settings: maps.Clone(s.settings), local: maps.Clone(s.blockSet.local)}
}

// restoreSettings is ROLLBACK TO for the settings.
func (s *Session) restoreSettings(sp settingsSavepoint) {
	s.changeSetting()
	s.settings = maps.Clone(sp.settings)
	s.blockSet.local = maps.Clone(sp.local)
	s.settingsChanged()
}
