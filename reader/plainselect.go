package reader

import (
	"encoding/binary"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Late materialisation. A plainReader given a row filter (prefilter) decodes
// the filtered columns of a batch first, evaluates the filter on them, and
// then decodes only the passing rows of every other column: readRows walks
// the same pages as read, consuming every value of the batch's rows, but
// copies out only the selected ones. Pages are still decompressed whole —
// what is saved is the copy of values nobody keeps, the arrays holding them
// and the gather that would pick the passing rows out of them afterwards.

// readRows decodes the next n rows of the column and returns an array of
// the rows listed in rows (ascending, each below n) only. Every one of the
// n rows is consumed, so the column stays aligned with the others.
func (c *plainColumn) readRows(n int, rows []int, mem memory.Allocator) (arrow.Array, error) {
	m := len(rows)
	var valid *memory.Buffer
	nulls := 0
	if c.nullable {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(m))))
		clear(valid.Bytes())
	}
	out := plainOut{c: c}
	out.start(m, mem)
	defer out.release()
	fail := func(err error) (arrow.Array, error) {
		if valid != nil {
			valid.Release()
		}
		return nil, err
	}
	if c.kind == plainFixed || c.kind == plainDecimal {
		// Null rows keep a zero value, as read leaves them.
		clear(out.values.Bytes())
	}
	j := 0 // rows[j] is the next selected row
	for pos := 0; pos < n; {
		if c.left == 0 {
			if err := c.nextPage(); err != nil {
				return fail(err)
			}
			continue
		}
		k := min(n-pos, c.left)
		end := j
		for end < m && rows[end] < pos+k {
			end++
		}
		defined := k
		var levels []byte // the chunk's definition levels; nil: all defined
		if c.nullable {
			c.levelScratch = growBits(c.levelScratch, k)
			var err error
			if defined, err = c.levels.read(c.levelScratch, 0, k); err != nil {
				return fail(err)
			}
			if defined < k {
				levels = c.levelScratch
			}
		}
		var vb []byte
		if valid != nil {
			vb = valid.Bytes()
		}
		got, err := out.pick(levels, pos, rows[j:end], j, defined, vb)
		if err != nil {
			return fail(err)
		}
		nulls += (end - j) - got
		c.left -= k
		pos += k
		j = end
	}
	if valid != nil && nulls == 0 {
		valid.Release()
		valid = nil
	}
	return out.finish(valid, nulls), nil
}

// growBits returns b cleared, with room for n bits.
func growBits(b []byte, n int) []byte {
	size := int(bitutil.BytesForBits(int64(n)))
	if cap(b) < size {
		b = make([]byte, size)
	}
	b = b[:size]
	clear(b)
	return b
}

// pick consumes the next defined values of the current page, which hold
// rows [pos, pos+k) of the batch (levels: their definition bits from bit
// 0, nil when every one is defined), and writes the rows sel lists (batch
// rows, ascending) at output positions from first on. It sets the
// validity bit (valid, nil for a required column) of each selected row that
// is not null and returns how many were.
func (o *plainOut) pick(levels []byte, pos int, sel []int, first, defined int, valid []byte) (int, error) {
	c := o.c
	// vi is the value index (within this chunk) of each selected row: its
	// row minus the nulls before it.
	got := 0
	vi, last := 0, 0 // values before chunk row last
	index := func(r int) (int, bool) {
		if levels == nil {
			return r, true
		}
		vi += countBits(levels, last, r-last)
		last = r
		return vi, bitutil.BitIsSet(levels, r)
	}
	switch c.kind {
	case plainFixed, plainDecimal:
		size := defined * c.width
		if len(c.data) < size {
			return 0, errors.New("page ends before its values")
		}
		dst := o.values.Bytes()
		for i, r := range sel {
			v, ok := index(r - pos)
			if !ok {
				continue
			}
			out := first + i
			src := c.data[v*c.width : (v+1)*c.width]
			if c.kind == plainFixed {
				copy(dst[out*c.width:(out+1)*c.width], src)
			} else {
				var x int64
				if c.width == 4 {
					x = int64(int32(binary.LittleEndian.Uint32(src)))
				} else {
					x = int64(binary.LittleEndian.Uint64(src))
				}
				binary.LittleEndian.PutUint64(dst[decimalBytes*out:], uint64(x))
				binary.LittleEndian.PutUint64(dst[decimalBytes*out+8:], uint64(x>>63)) // the sign, extended
			}
			if valid != nil {
				bitutil.SetBit(valid, out)
			}
			got++
		}
		c.data = c.data[size:]
	case plainBoolean:
		if (c.bit+defined+7)/8 > len(c.data) {
			return 0, errors.New("page ends before its values")
		}
		dst := o.values.Bytes()
		for i, r := range sel {
			v, ok := index(r - pos)
			if !ok {
				continue
			}
			out := first + i
			bitutil.SetBitTo(dst, out, bitutil.BitIsSet(c.data, c.bit+v))
			if valid != nil {
				bitutil.SetBit(valid, out)
			}
			got++
		}
		c.bit += defined
	case plainByteArray:
		// Values have no fixed place: the page is walked value by value,
		// the selected ones copied.
		data := c.data
		walked := 0 // values of data already passed
		skip := func(to int) error {
			for ; walked < to; walked++ {
				if len(data) < 4 {
					return errors.New("page ends before its values")
				}
				l := int(binary.LittleEndian.Uint32(data))
				if l > len(data)-4 {
					return errors.New("a value runs past the end of its page")
				}
				data = data[4+l:]
			}
			return nil
		}
		offs := o.offsets.Bytes()
		for i, r := range sel {
			out := first + i
			v, ok := index(r - pos)
			if ok {
				if err := skip(v); err != nil {
					return 0, err
				}
				if len(data) < 4 {
					return 0, errors.New("page ends before its values")
				}
				l := int(binary.LittleEndian.Uint32(data))
				if l > len(data)-4 {
					return 0, errors.New("a value runs past the end of its page")
				}
				if err := o.grow(l); err != nil {
					return 0, err
				}
				o.used += copy(o.values.Buf()[o.used:o.used+l], data[4:4+l])
				data = data[4+l:]
				walked++
				if valid != nil {
					bitutil.SetBit(valid, out)
				}
				got++
			}
			binary.LittleEndian.PutUint32(offs[4*(out+1):], uint32(o.used))
		}
		if err := skip(defined); err != nil {
			return 0, err
		}
		c.data = data
	}
	return got, nil
}
