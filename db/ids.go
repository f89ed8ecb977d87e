package db

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Epoch of snowflake timestamps: 2020-01-01T00:00:00Z.
var snowflakeEpoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	nodeBits     = 10
	sequenceBits = 12
	maxNode      = 1<<nodeBits - 1
	maxSequence  = 1<<sequenceBits - 1
)

// ID is a snowflake. JSON carries it as a decimal string so JavaScript
// clients do not lose precision above 2^53.
type ID int64

func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

func (id ID) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 22)
	b = append(b, '"')
	b = strconv.AppendInt(b, int64(id), 10)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a decimal string (the wire form) or a bare number.
func (id *ID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	} else {
		s = string(b)
	}
	v, ok := ParseID(s)
	if !ok {
		return errors.New("not a snowflake id")
	}
	*id = v
	return nil
}

// ParseID reads a positive decimal snowflake; anything else is not an id.
func ParseID(s string) (ID, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	return ID(v), true
}

// IDGen mints snowflakes: 41 bits of milliseconds since the epoch, 10 bits of
// node id, 12 bits of sequence within the millisecond.
type IDGen struct {
	mu   sync.Mutex
	node int64
	last int64
	seq  int64
}

func NewIDGen(node int64) *IDGen { return &IDGen{node: node & maxNode} }

func (g *IDGen) Next() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Since(snowflakeEpoch).Milliseconds()
	if now < g.last { // clock went back: keep ids increasing
		now = g.last
	}
	if now == g.last {
		g.seq = (g.seq + 1) & maxSequence
		if g.seq == 0 {
			now = g.last + 1 // sequence exhausted: borrow the next millisecond
		}
	} else {
		g.seq = 0
	}
	g.last = now
	return now<<(nodeBits+sequenceBits) | g.node<<sequenceBits | g.seq
}

// IDTime returns the creation time encoded in a snowflake.
func IDTime(id int64) time.Time {
	return snowflakeEpoch.Add(time.Duration(id>>(nodeBits+sequenceBits)) * time.Millisecond)
}

func randomNode() int64 {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint16(b[:])) & maxNode
}
