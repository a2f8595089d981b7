// Package pgnumeric computes PostgreSQL's numeric arithmetic where the
// result's display scale depends on the values: a numeric value is an exact
// decimal with a display scale (dscale) of its own, and
//
//   - a + b and a - b have scale max(dscale(a), dscale(b)), a * b has
//     dscale(a) + dscale(b); all three are exact;
//   - a / b is rounded (half away from zero) to the scale PostgreSQL's
//     select_div_scale picks: at least 16 significant digits, estimated
//     from the first base-10000 digits of both operands, and no fewer
//     than either operand's dscale (so 1/3 has 20 fractional digits,
//     10/3 has 16, and 3/2 has 16 while 1.5/1 has 20);
//   - avg is sum / count by that division.
//
// Values are read from and written as PostgreSQL's text form, which
// carries the display scale ("2.50" has dscale 2).
package pgnumeric

import (
	"errors"
	"math/big"
	"strings"
)

// Limits of PostgreSQL's numeric (numeric.c).
const (
	minSigDigits    = 16     // NUMERIC_MIN_SIG_DIGITS
	maxDisplayScale = 1000   // NUMERIC_MAX_DISPLAY_SCALE
	maxDScale       = 0x3FFF // NUMERIC_DSCALE_MAX: the most a stored value has
	decDigits       = 4      // DEC_DIGITS: decimal digits per base-10000 digit
)

// ErrDivisionByZero is a division by zero (SQLSTATE 22012).
var ErrDivisionByZero = errors.New("division by zero")

// Value is an exact decimal: Unscaled × 10^-Scale, shown with Scale
// fractional digits.
type Value struct {
	Unscaled *big.Int
	Scale    int
}

// Parse reads a number in plain decimal notation ("-12.50", "7"), as
// DuckDB prints DECIMAL and integer values.
func Parse(s string) (Value, error) {
	t := strings.TrimSpace(s)
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	whole, frac, _ := strings.Cut(t, ".")
	digits := whole + frac
	if digits == "" {
		return Value{}, errors.New("invalid input syntax for type numeric: \"" + s + "\"")
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return Value{}, errors.New("invalid input syntax for type numeric: \"" + s + "\"")
		}
	}
	u, _ := new(big.Int).SetString(digits, 10)
	if neg {
		u.Neg(u)
	}
	return Value{Unscaled: u, Scale: len(frac)}, nil
}

// String is the value as PostgreSQL prints numeric: exactly Scale
// fractional digits, no sign on zero.
func (v Value) String() string {
	digits := new(big.Int).Abs(v.Unscaled).String()
	if len(digits) <= v.Scale {
		digits = strings.Repeat("0", v.Scale-len(digits)+1) + digits
	}
	var b strings.Builder
	if v.Unscaled.Sign() < 0 {
		b.WriteByte('-')
	}
	b.WriteString(digits[:len(digits)-v.Scale])
	if v.Scale > 0 {
		b.WriteByte('.')
		b.WriteString(digits[len(digits)-v.Scale:])
	}
	return b.String()
}

// pow10 is 10^n.
func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// rescaled is v's unscaled value at a scale s ≥ v.Scale.
func (v Value) rescaled(s int) *big.Int {
	return new(big.Int).Mul(v.Unscaled, pow10(s-v.Scale))
}

// Add is a + b.
func Add(a, b Value) Value {
	s := max(a.Scale, b.Scale)
	return Value{Unscaled: new(big.Int).Add(a.rescaled(s), b.rescaled(s)), Scale: s}
}

// Sub is a - b.
func Sub(a, b Value) Value {
	s := max(a.Scale, b.Scale)
	return Value{Unscaled: new(big.Int).Sub(a.rescaled(s), b.rescaled(s)), Scale: s}
}

// Mul is a × b: exact, rounded only past the largest scale a numeric
// stores (numeric_mul).
func Mul(a, b Value) Value {
	v := Value{Unscaled: new(big.Int).Mul(a.Unscaled, b.Unscaled), Scale: a.Scale + b.Scale}
	if v.Scale > maxDScale {
		return Round(v, maxDScale)
	}
	return v
}

// Div is a / b at PostgreSQL's result scale (DivScale), rounded half away
// from zero.
func Div(a, b Value) (Value, error) {
	if b.Unscaled.Sign() == 0 {
		return Value{}, ErrDivisionByZero
	}
	r := DivScale(a, b)
	// a/b × 10^r = a.U × 10^(r - a.Scale + b.Scale) / b.U
	num, den := new(big.Int).Set(a.Unscaled), new(big.Int).Set(b.Unscaled)
	if e := r - a.Scale + b.Scale; e >= 0 {
		num.Mul(num, pow10(e))
	} else {
		den.Mul(den, pow10(-e))
	}
	return Value{Unscaled: roundQuotient(num, den), Scale: r}, nil
}

// roundQuotient is num / den rounded half away from zero.
func roundQuotient(num, den *big.Int) *big.Int {
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Sign() == 0 {
		return q
	}
	twice := new(big.Int).Abs(m)
	twice.Lsh(twice, 1)
	if twice.Cmp(new(big.Int).Abs(den)) >= 0 {
		if num.Sign()*den.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// DivScale is the scale of a / b: select_div_scale of PostgreSQL's
// numeric.c. The quotient's weight (in base-10000 digits) is estimated
// from both operands' weights and first digits, assuming a < b where the
// first digits are equal; the scale gives 16 significant digits from it,
// and is at least either operand's scale.
func DivScale(a, b Value) int {
	w1, f1 := baseDigits(a)
	w2, f2 := baseDigits(b)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	r := minSigDigits - qweight*decDigits
	r = max(r, a.Scale, b.Scale, 0)
	return min(r, maxDisplayScale)
}

// baseDigits returns the weight of v's first non-zero base-10000 digit
// (the digit multiplying 10000^weight, digits aligned on the decimal point
// as PostgreSQL stores them) and that digit; 0, 0 for zero.
func baseDigits(v Value) (weight, first int) {
	if v.Unscaled.Sign() == 0 {
		return 0, 0
	}
	abs := new(big.Int).Abs(v.Unscaled)
	exp := len(abs.String()) - 1 - v.Scale // decimal exponent of the leading digit
	weight = floorDiv(exp, decDigits)
	// first = floor(|v| / 10^(4·weight)) = floor(abs × 10^(-Scale - 4·weight))
	shift := -v.Scale - decDigits*weight
	if shift >= 0 {
		abs.Mul(abs, pow10(shift))
	} else {
		abs.Quo(abs, pow10(-shift))
	}
	return weight, int(abs.Int64())
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Variance is PostgreSQL's var_pop/var_samp (sqrt false) or
// stddev_pop/stddev_samp (sqrt true) of n values whose sum is sumX and
// sum of squares sumX2, computed as numeric_stddev_internal does:
// (n·sumX2 − sumX²) / (n·(n−1)) (sample) or / n² (population) at the
// division's scale, its square root at that scale; 0 when the numerator is
// not positive. ok is false where PostgreSQL's answer is NULL (no values;
// one value of a sample).
func Variance(sumX, sumX2 Value, n int64, sample, sqrt bool) (v Value, ok bool) {
	if n == 0 || sample && n <= 1 {
		return Value{}, false
	}
	vN := Value{Unscaled: big.NewInt(n), Scale: 0}
	rscale := sumX.Scale * 2
	sq := Mul(sumX, sumX)
	nx2 := Mul(vN, sumX2)
	nx2 = Round(nx2, rscale)
	num := Sub(nx2, sq)
	if num.Unscaled.Sign() <= 0 {
		return Value{Unscaled: new(big.Int), Scale: 0}, true
	}
	den := Mul(vN, vN)
	if sample {
		den = Mul(vN, Value{Unscaled: big.NewInt(n - 1), Scale: 0})
	}
	q, _ := Div(num, den)
	if !sqrt {
		return q, true
	}
	return Sqrt(q, q.Scale), true
}

// Round is v at scale s ≥ 0: rounded half away from zero, or with zeros
// appended.
func Round(v Value, s int) Value {
	if s >= v.Scale {
		return Value{Unscaled: v.rescaled(s), Scale: s}
	}
	return Value{Unscaled: roundQuotient(v.Unscaled, pow10(v.Scale-s)), Scale: s}
}

// Sqrt is the square root of v ≥ 0 rounded half away from zero to scale s.
func Sqrt(v Value, s int) Value {
	// floor(√v · 10^(s+1)) = isqrt(v.U · 10^(2s+2−v.Scale)), then round the last digit.
	x := new(big.Int).Set(v.Unscaled)
	if e := 2*s + 2 - v.Scale; e >= 0 {
		x.Mul(x, pow10(e))
	} else {
		x.Quo(x, pow10(-e))
	}
	r := new(big.Int).Sqrt(x)
	return Value{Unscaled: roundQuotient(r, big.NewInt(10)), Scale: s}
}
