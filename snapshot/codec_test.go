package snapshot_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/coordlog/coordlog/snapshot"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// id is a byte array with a text form, like groupstate.Uuid.
type id [4]byte

func (i id) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(i[:])), nil }
func (i *id) UnmarshalText(b []byte) error {
	d, err := hex.DecodeString(string(b))
	if err != nil || len(d) != 4 {
		return errors.New("bad id")
	}
	copy(i[:], d)
	return nil
}

// pairs encodes itself positionally.
type pairs []struct {
	K string
	V int64
}

func (p pairs) MarshalSnapshot(e *snapshot.Encoder) error {
	if err := e.ArrayLen(2 * len(p)); err != nil {
		return err
	}
	for _, kv := range p {
		if err := e.String(kv.K); err != nil {
			return err
		}
		if err := e.Int(kv.V); err != nil {
			return err
		}
	}
	return nil
}

func (p *pairs) UnmarshalSnapshot(d *snapshot.Decoder) error {
	n, err := d.ArrayLen()
	if err != nil {
		return err
	}
	for i := 0; i < n/2; i++ {
		var kv struct {
			K string
			V int64
		}
		if kv.K, err = d.String(); err != nil {
			return err
		}
		if kv.V, err = d.Int(); err != nil {
			return err
		}
		*p = append(*p, kv)
	}
	return nil
}

type custom struct {
	IDs   []id
	One   id
	Pairs pairs
}

func TestCustomCodecs(t *testing.T) {
	in := custom{IDs: []id{{1, 2, 3, 4}, {}}, One: id{9, 9, 9, 9}, Pairs: pairs{{"a", 1}, {"b", -1 << 40}}}
	b := encode(t, meta(0, 1), in)
	require.True(t, bytes.Contains(b, []byte{0xc4, 4, 1, 2, 3, 4}), "byte arrays are raw msgpack bin, not their text form")
	var out custom
	_, err := snapshot.Decode(bytes.NewReader(b), int64(len(b)), &out)
	require.NoError(t, err)
	require.Equal(t, in, out)

	// The text form (what msgpack writes on its own) still decodes.
	type textForm struct{ One string }
	raw, err := msgpack.Marshal(textForm{One: "0a0b0c0d"})
	require.NoError(t, err)
	var got struct{ One id }
	require.NoError(t, msgpack.Unmarshal(raw, &got))
	require.Equal(t, id{10, 11, 12, 13}, got.One)
}
