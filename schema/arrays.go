package schema

// More PostgreSQL type OIDs: composite values and array types.
const (
	OIDRecord      = 2249
	OIDRecordArray = 2287
	OIDTimeTZ      = 1266
)

// arrayOIDs maps an element type's OID to its array type's OID.
var arrayOIDs = map[uint32]uint32{
	OIDBool: 1000, OIDBytea: 1001, OIDInt2: 1005, OIDInt4: 1007, OIDText: 1009, OIDBPChar: 1014,
	OIDVarchar: 1015, OIDInt8: 1016, OIDFloat4: 1021, OIDFloat8: 1022, OIDTimestamp: 1115, OIDDate: 1182,
	OIDTime: 1183, OIDTimestamptz: 1185, OIDInterval: 1187, OIDNumeric: 1231, OIDTimeTZ: 1270,
	OIDUUID: 2951, OIDJSON: 199, OIDJSONB: 3807, OIDRecord: OIDRecordArray,
}

// elemOIDs is arrayOIDs inverted.
var elemOIDs = func() map[uint32]uint32 {
	m := make(map[uint32]uint32, len(arrayOIDs))
	for e, a := range arrayOIDs {
		m[a] = e
	}
	return m
}()

// ArrayOID is the OID of the array type of elements of type elem; 0 when
// the server knows none.
func ArrayOID(elem uint32) uint32 { return arrayOIDs[elem] }

// ElemOID is the element type of array type oid; 0 when oid is not an
// array type the server knows.
func ElemOID(array uint32) uint32 { return elemOIDs[array] }
