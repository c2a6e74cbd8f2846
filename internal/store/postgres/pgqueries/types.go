package pgqueries

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// TimeLayout is how the service writes a time (payments.go's timeLayout): UTC, to the
// microsecond.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// LocalTimeLayout is how the service writes an exchange rate's apply_time: UTC, without an
// offset, to the second (validate.LocalTimeLayout).
const LocalTimeLayout = "2006-01-02T15:04:05"

// RegisterTypes makes m read the columns of PostgreSQL's own types (migrations/0006) into
// the Go types the models keep from SQLite: a timestamptz into its string in TimeLayout, a
// timestamp into LocalTimeLayout, a boolean into the int64 0 or 1, a numeric into its
// digits as PostgreSQL shows them; and write an int64 0 or 1 as a boolean. A uuid reads as
// its canonical string already, and a string parameter is sent as text, which the server
// parses into the column's type. Every connection of the store gets it (AfterConnect).
//
// The times are read in the binary format, a count of microseconds in UTC, so the session's
// TimeZone and DateStyle never change the text; the store runs every query in a mode that
// reads results in that format (postgres.Open).
func RegisterTypes(m *pgtype.Map) {
	m.RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID,
		Codec: timeCodec{Codec: &pgtype.TimestamptzCodec{}, layout: TimeLayout}})
	m.RegisterType(&pgtype.Type{Name: "timestamp", OID: pgtype.TimestampOID,
		Codec: timeCodec{Codec: &pgtype.TimestampCodec{}, layout: LocalTimeLayout}})
	m.RegisterType(&pgtype.Type{Name: "bool", OID: pgtype.BoolOID, Codec: flagCodec{}})
	m.RegisterType(&pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: decimalCodec{}})
}

// timeCodec is pgx's codec of a time type that also scans the binary format into a string
// in layout; timestamp and timestamptz share the format: microseconds since 2000-01-01,
// of UTC for timestamptz, of the wall clock for timestamp.
type timeCodec struct {
	pgtype.Codec
	layout string
}

func (c timeCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*string); ok && format == pgtype.BinaryFormatCode {
		return scanTimeString(c.layout)
	}
	return c.Codec.PlanScan(m, oid, format, target)
}

// scanTimeString scans a binary time into a *string in its layout.
type scanTimeString string

// pgEpoch is 2000-01-01T00:00:00Z in Unix microseconds: the zero of PostgreSQL's times.
const pgEpoch = 946684800 * 1000000

func (layout scanTimeString) Scan(src []byte, dst any) error {
	if src == nil {
		return errors.New("payments: a NULL time scanned into a string")
	}
	if len(src) != 8 {
		return fmt.Errorf("payments: a time of %d bytes", len(src))
	}
	micros := int64(binary.BigEndian.Uint64(src)) // #nosec G115 -- the wire's two's complement
	if micros == math.MaxInt64 || micros == math.MinInt64 {
		return errors.New("payments: an infinite time")
	}
	*dst.(*string) = time.UnixMicro(micros + pgEpoch).UTC().Format(string(layout))
	return nil
}

// flagCodec is pgx's boolean codec that also reads a boolean into an int64, 0 or 1, and
// writes an int64 0 or 1 as a boolean.
type flagCodec struct{ pgtype.BoolCodec }

func (c flagCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(int64); ok {
		return encodeFlag(format)
	}
	return c.BoolCodec.PlanEncode(m, oid, format, value)
}

func (c flagCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*int64); ok {
		return scanFlag(format)
	}
	return c.BoolCodec.PlanScan(m, oid, format, target)
}

// encodeFlag writes an int64 0 or 1 as a boolean in its format.
type encodeFlag int16

func (format encodeFlag) Encode(value any, buf []byte) ([]byte, error) {
	v := value.(int64)
	if v != 0 && v != 1 {
		return nil, fmt.Errorf("payments: flag %d: want 0 or 1", v)
	}
	if int16(format) == pgtype.BinaryFormatCode {
		return append(buf, "\x00\x01"[v]), nil
	}
	return append(buf, "ft"[v]), nil
}

// scanFlag reads a boolean in its format into an int64, 0 or 1.
type scanFlag int16

func (format scanFlag) Scan(src []byte, dst any) error {
	if len(src) != 1 {
		return fmt.Errorf("payments: a boolean of %d bytes", len(src))
	}
	var v int64
	switch {
	case int16(format) == pgtype.BinaryFormatCode && src[0] == 1, int16(format) == pgtype.TextFormatCode && src[0] == 't':
		v = 1
	case int16(format) == pgtype.BinaryFormatCode && src[0] == 0, int16(format) == pgtype.TextFormatCode && src[0] == 'f':
	default:
		return fmt.Errorf("payments: a boolean of %q", src)
	}
	*dst.(*int64) = v
	return nil
}

// decimalCodec is pgx's numeric codec in the text format, so that a numeric scans into a
// string as PostgreSQL writes it: its digits and scale as given (1.50 stays 1.50).
type decimalCodec struct{ pgtype.NumericCodec }

func (decimalCodec) PreferredFormat() int16 { return pgtype.TextFormatCode }
