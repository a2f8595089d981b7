package flightsql

import (
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
)

// registerSQLInfo fills in what GetSqlInfo reports.
func (s *Server) registerSQLInfo() error {
	for id, v := range map[flightsql.SqlInfo]any{
		flightsql.SqlInfoFlightSqlServerName:         "LakeSoul-Go",
		flightsql.SqlInfoFlightSqlServerVersion:      "16.4",
		flightsql.SqlInfoFlightSqlServerArrowVersion: "18",
		flightsql.SqlInfoFlightSqlServerReadOnly:     false,
		flightsql.SqlInfoFlightSqlServerSql:          true,
		flightsql.SqlInfoFlightSqlServerSubstrait:    false,
		flightsql.SqlInfoFlightSqlServerTransaction:  int32(flightsql.SqlTransactionNone),
		flightsql.SqlInfoFlightSqlServerCancel:       false,
		flightsql.SqlInfoDDLCatalog:                  false,
		flightsql.SqlInfoDDLSchema:                   true,
		flightsql.SqlInfoDDLTable:                    true,
		flightsql.SqlInfoIdentifierQuoteChar:         `"`,
		flightsql.SqlInfoTransactionsSupported:       false,
	} {
		if err := s.RegisterSqlInfo(id, v); err != nil {
			return err
		}
	}
	return nil
}
