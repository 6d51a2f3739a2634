package snapshot_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordlog/coordlog/snapshot"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/format-v*.snap")

// state is a payload shaped like the real one (groupstate.Dump): nested sorted slices,
// pointers, byte arrays, null vs empty.
type state struct {
	Version string
	Groups  []group
	Offsets []offset
}

type group struct {
	ID       string
	Epoch    int32
	Leader   *string
	Members  []member
	Metadata []byte
}

type member struct {
	ID     string
	Topics []string
	Topic  [16]byte
}

type offset struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
	Metadata  string
}

func sampleState(groups, members, offsets int) state {
	st := state{Version: "4.4"}
	leader := "m-0"
	for g := 0; g < groups; g++ {
		gr := group{ID: fmt.Sprintf("group-%06d", g), Epoch: int32(g), Metadata: []byte{byte(g), 1, 2}}
		if g%2 == 0 {
			gr.Leader = &leader
		}
		for m := 0; m < members; m++ {
			var id [16]byte
			id[0], id[15] = byte(g), byte(m)
			gr.Members = append(gr.Members, member{ID: fmt.Sprintf("m-%d", m), Topics: []string{"a", "b"}, Topic: id})
		}
		st.Groups = append(st.Groups, gr)
		for o := 0; o < offsets; o++ {
			st.Offsets = append(st.Offsets, offset{Group: gr.ID, Topic: "topic", Partition: int32(o), Offset: int64(g*1000 + o), Metadata: ""})
		}
	}
	return st
}

func meta(p int32, next int64) snapshot.Meta {
	return snapshot.Meta{Partition: p, NextOffset: next, KafkaVersion: "4.4", PayloadKind: "test/v1",
		Counters: []snapshot.Counter{{Name: "records", Value: next}}}
}

func encode(t testing.TB, m snapshot.Meta, v any) []byte {
	var buf bytes.Buffer
	n, err := snapshot.Encode(&buf, m, v)
	require.NoError(t, err)
	require.EqualValues(t, buf.Len(), n)
	return buf.Bytes()
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	in := sampleState(20, 3, 5)
	b := encode(t, meta(3, 1234), in)
	var out state
	h, err := snapshot.Decode(bytes.NewReader(b), int64(len(b)), &out)
	require.NoError(t, err)
	require.Equal(t, in, out)
	require.Equal(t, meta(3, 1234), h.Meta)
	require.Equal(t, snapshot.FormatVersion, h.Format)
	require.Nil(t, out.Groups[1].Leader)
	require.NotNil(t, out.Groups[0].Leader)
}

func TestDeterministic(t *testing.T) {
	a := encode(t, meta(0, 99), sampleState(50, 4, 10))
	b := encode(t, meta(0, 99), sampleState(50, 4, 10))
	require.Equal(t, a, b)
	// A restored value encodes to the same bytes again.
	var out state
	_, err := snapshot.Decode(bytes.NewReader(a), int64(len(a)), &out)
	require.NoError(t, err)
	require.Equal(t, a, encode(t, meta(0, 99), out))
}

func TestPayloadTypeRejected(t *testing.T) {
	type withMap struct{ M map[int32]int64 }
	type withIface struct{ X []any }
	for _, v := range []any{withMap{}, &withIface{}, map[string]string{}, nil} {
		_, err := snapshot.Encode(&bytes.Buffer{}, meta(0, 0), v)
		require.ErrorIs(t, err, snapshot.ErrPayloadType, "%T", v)
	}
	type fine struct {
		A []*struct{ B [4]byte }
		c map[int]int // unexported: not encoded
		D map[int]int `msgpack:"-"`
	}
	_, err := snapshot.Encode(&bytes.Buffer{}, meta(0, 0), fine{})
	require.NoError(t, err)
}

func openStore(t *testing.T, retain int) *snapshot.Store {
	s, err := snapshot.OpenStore(filepath.Join(t.TempDir(), "snapshots"), snapshot.Options{Retain: retain})
	require.NoError(t, err)
	return s
}

func TestStoreWriteListLoadRetain(t *testing.T) {
	s := openStore(t, 3)
	for _, off := range []int64{10, 20, 30, 40, 50} {
		_, err := s.Write(meta(1, off), sampleState(2, 1, int(off)))
		require.NoError(t, err)
	}
	_, err := s.Write(meta(2, 5), sampleState(1, 1, 1))
	require.NoError(t, err)

	infos, err := s.List(1)
	require.NoError(t, err)
	var offs []int64
	for _, in := range infos {
		require.NoError(t, in.Err)
		require.Equal(t, in.NextOffset, in.Header.Meta.NextOffset)
		offs = append(offs, in.NextOffset)
	}
	require.Equal(t, []int64{50, 40, 30}, offs, "newest first, retention 3")

	all, err := s.List(-1)
	require.NoError(t, err)
	require.Len(t, all, 4)
	require.EqualValues(t, 1, all[0].Partition)
	require.EqualValues(t, 2, all[3].Partition)

	var got state
	l, err := s.Load(1, func(sn *snapshot.Snapshot) error { return sn.Decode(&got) })
	require.NoError(t, err)
	require.EqualValues(t, 50, l.Used.NextOffset)
	require.Empty(t, l.Skipped)
	require.Equal(t, sampleState(2, 1, 50), got)

	_, err = s.Load(7, func(*snapshot.Snapshot) error { return nil })
	require.ErrorIs(t, err, snapshot.ErrNoSnapshot)

	removed, err := s.Prune(1, 1)
	require.NoError(t, err)
	require.Equal(t, []string{snapshot.Name(1, 40), snapshot.Name(1, 30)}, removed)
}

func TestNameRoundTrip(t *testing.T) {
	n := snapshot.Name(49, 1<<40)
	require.Equal(t, "snap-0000000049-00000001099511627776.snap", n)
	p, off, ok := snapshot.ParseName(n)
	require.True(t, ok)
	require.EqualValues(t, 49, p)
	require.EqualValues(t, 1<<40, off)
	for _, bad := range []string{"snap-1-2.snap", n + ".tmp", n + ".broken", "x" + n, "snap-000000004a-00000001099511627776.snap"} {
		_, _, ok := snapshot.ParseName(bad)
		require.False(t, ok, bad)
	}
}

// corruptions damage the newest snapshot file; each must make Load fall back to the older
// snapshot with a message naming the problem.
var corruptions = []struct {
	name    string
	damage  func(b []byte) []byte
	msg     string // in the message
	leftIn  bool   // left in place rather than moved aside
	headers bool   // List reports a header error too
}{
	{"payload bit flip", func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }, "checksum", false, false},
	{"meta bit flip", func(b []byte) []byte { b[30] ^= 0x01; return b }, "meta checksum", false, true},
	{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }, "bad magic", false, true},
	{"trailer crc flip", func(b []byte) []byte { b[len(b)-6] ^= 0xff; return b }, "checksum", false, false},
	{"truncated to zero", func(b []byte) []byte { return b[:0] }, "truncated", false, true},
	{"truncated in header", func(b []byte) []byte { return b[:30] }, "truncated", false, true},
	{"truncated in payload", func(b []byte) []byte { return b[:len(b)/2] }, "no trailer", false, false},
	{"truncated by one byte", func(b []byte) []byte { return b[:len(b)-1] }, "no trailer", false, false},
	{"trailer cut", func(b []byte) []byte { return b[:len(b)-16] }, "no trailer", false, false},
	{"junk appended", func(b []byte) []byte { return append(b, 1, 2, 3) }, "no trailer", false, false},
	{"zeroed tail (lost page)", func(b []byte) []byte { clear(b[len(b)-4096:]); return b }, "no trailer", false, false},
	{"newer format", func(b []byte) []byte { b[11] = 99; return b }, "unsupported format version 99", true, true},
	{"unknown flags", func(b []byte) []byte { b[15] = 1; return b }, "unknown flags", false, true},
}

func TestLoadFallsBackOnCorruption(t *testing.T) {
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, 0)
			_, err := s.Write(meta(0, 100), sampleState(30, 2, 4))
			require.NoError(t, err)
			in, err := s.Write(meta(0, 200), sampleState(40, 2, 4))
			require.NoError(t, err)
			b, err := os.ReadFile(in.Path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(in.Path, c.damage(b), 0o644))

			infos, err := s.List(0)
			require.NoError(t, err)
			require.Equal(t, c.headers, infos[0].Err != nil, "List header error: %v", infos[0].Err)
			_, err = s.Verify(in.Name)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.msg)

			var got state
			l, err := s.Load(0, func(sn *snapshot.Snapshot) error { return sn.Decode(&got) })
			require.NoError(t, err)
			require.EqualValues(t, 100, l.Used.NextOffset)
			require.Equal(t, sampleState(30, 2, 4), got)
			require.Len(t, l.Skipped, 1)
			msgs := strings.Join(l.Messages(), "\n")
			t.Log(msgs)
			require.Contains(t, msgs, c.msg)
			require.Contains(t, msgs, in.Name)
			require.Contains(t, msgs, "using older snapshot "+snapshot.Name(0, 100))
			_, statErr := os.Stat(in.Path)
			if c.leftIn {
				require.NoError(t, statErr)
				require.Empty(t, l.Skipped[0].MovedTo)
			} else {
				require.ErrorIs(t, statErr, os.ErrNotExist)
				require.Equal(t, in.Name+".broken", l.Skipped[0].MovedTo)
				_, err := os.Stat(filepath.Join(s.Dir(), in.Name+".broken"))
				require.NoError(t, err)
				// The next Load goes straight to the older snapshot.
				l, err = s.Load(0, func(sn *snapshot.Snapshot) error { return nil })
				require.NoError(t, err)
				require.Empty(t, l.Skipped)
			}
		})
	}
}

func TestLoadNothingValid(t *testing.T) {
	s := openStore(t, 0)
	for _, off := range []int64{1, 2} {
		in, err := s.Write(meta(0, off), sampleState(1, 1, 1))
		require.NoError(t, err)
		require.NoError(t, os.Truncate(in.Path, 10))
	}
	l, err := s.Load(0, func(*snapshot.Snapshot) error { return nil })
	require.ErrorIs(t, err, snapshot.ErrNoSnapshot)
	require.Nil(t, l.Used)
	require.Len(t, l.Skipped, 2)
	msgs := l.Messages()
	require.Contains(t, msgs[len(msgs)-1], "replaying from the start")
	// A second quarantine of the same name does not overwrite the first.
	in, err := s.Write(meta(0, 2), sampleState(1, 1, 1))
	require.NoError(t, err)
	require.NoError(t, os.Truncate(in.Path, 10))
	l, err = s.Load(0, func(*snapshot.Snapshot) error { return nil })
	require.ErrorIs(t, err, snapshot.ErrNoSnapshot)
	require.Equal(t, in.Name+".broken.1", l.Skipped[0].MovedTo)
}

func TestLoadCallerRefusal(t *testing.T) {
	s := openStore(t, 0)
	for _, off := range []int64{1, 2} {
		_, err := s.Write(meta(0, off), sampleState(1, 1, 1))
		require.NoError(t, err)
	}
	refuse := errors.New("written with Kafka 4.3 rules, want 4.4")
	l, err := s.Load(0, func(sn *snapshot.Snapshot) error {
		if sn.NextOffset == 2 {
			return refuse
		}
		return nil
	})
	require.NoError(t, err)
	require.EqualValues(t, 1, l.Used.NextOffset)
	require.ErrorIs(t, l.Skipped[0].Err, refuse)
	require.Empty(t, l.Skipped[0].MovedTo, "refused snapshots stay")

	// A payload that verifies but does not decode into the caller's type is corrupt for it.
	var wrong struct{ Groups int }
	l, err = s.Load(0, func(sn *snapshot.Snapshot) error { return sn.Decode(&wrong) })
	require.ErrorIs(t, err, snapshot.ErrNoSnapshot)
	require.Len(t, l.Skipped, 2)
	require.ErrorIs(t, l.Skipped[0].Err, snapshot.ErrCorrupt)
}

func TestNameMustMatchMeta(t *testing.T) {
	s := openStore(t, 0)
	in, err := s.Write(meta(0, 5), sampleState(1, 1, 1))
	require.NoError(t, err)
	require.NoError(t, os.Rename(in.Path, filepath.Join(s.Dir(), snapshot.Name(0, 9))))
	_, err = s.Verify(snapshot.Name(0, 9))
	require.ErrorIs(t, err, snapshot.ErrCorrupt)
	require.Contains(t, err.Error(), "its name says partition 0 offset 9")
}

// TestFormatCompatibility loads the committed file of every format version and checks that
// re-encoding the value gives the committed bytes of the current version (the same state
// gives the same bytes across runs and machines). Regenerate with -update only when the
// format version changes, and keep the old files.
func TestFormatCompatibility(t *testing.T) {
	want := sampleState(3, 2, 2)
	wantMeta := meta(7, 4242)
	wantMeta.CreatedAtUnixMilli = 1700000000000
	wantMeta.Log = []snapshot.LogMark{{Offset: 0, BaseOffset: 0, LastOffset: 9, CRC: 0x1234abcd}, {Offset: 4241, BaseOffset: 4230, LastOffset: 4241, CRC: 0x9abcdef0}}
	cur := filepath.Join("testdata", fmt.Sprintf("format-v%d.snap", snapshot.FormatVersion))
	if *update {
		require.NoError(t, os.WriteFile(cur, encode(t, wantMeta, want), 0o644))
	}
	files, err := filepath.Glob(filepath.Join("testdata", "format-v*.snap"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for v := uint32(1); v <= snapshot.FormatVersion; v++ {
		f := filepath.Join("testdata", fmt.Sprintf("format-v%d.snap", v))
		b, err := os.ReadFile(f)
		require.NoError(t, err, "keep a snapshot of every format version in testdata")
		var got state
		h, err := snapshot.Decode(bytes.NewReader(b), int64(len(b)), &got)
		require.NoError(t, err, f)
		require.Equal(t, v, h.Format)
		require.Equal(t, want, got, f)
		m := wantMeta
		if v < 2 {
			m.Log = nil // format 2 added the log identity
		}
		require.Equal(t, m, h.Meta, f)
		if v == snapshot.FormatVersion {
			require.Equal(t, b, encode(t, wantMeta, want), "encoding changed: bump FormatVersion")
		}
	}
}

// TestLoadChecksumWhileDecoding damages a byte inside a string of the payload, so that the
// payload still decodes: Load's snapshots match the checksum in the pass that decodes them,
// and the decoded value of a damaged file is never used.
func TestLoadChecksumWhileDecoding(t *testing.T) {
	s := openStore(t, 0)
	_, err := s.Write(meta(0, 100), sampleState(30, 2, 4))
	require.NoError(t, err)
	in, err := s.Write(meta(0, 200), sampleState(40, 2, 4))
	require.NoError(t, err)
	b, err := os.ReadFile(in.Path)
	require.NoError(t, err)
	i := bytes.Index(b, []byte("group-000017"))
	require.Positive(t, i)
	b[i+len("group-0000")] = 'X' // group-0000X7: still a valid string
	require.NoError(t, os.WriteFile(in.Path, b, 0o644))

	var decoded []state
	l, err := s.Load(0, func(sn *snapshot.Snapshot) error {
		var got state
		if err := sn.Decode(&got); err != nil {
			require.ErrorIs(t, err, snapshot.ErrCorrupt)
			require.Contains(t, err.Error(), "checksum")
			return err
		}
		decoded = append(decoded, got)
		return nil
	})
	require.NoError(t, err)
	require.EqualValues(t, 100, l.Used.NextOffset)
	require.Equal(t, []state{sampleState(30, 2, 4)}, decoded, "only the intact snapshot's payload is returned")
	require.Len(t, l.Skipped, 1)
	require.Equal(t, in.Name+".broken", l.Skipped[0].MovedTo)
}

// TestReadOnlyStore: a read-only store creates, cleans, moves and writes nothing: a missing
// directory is an empty store, a corrupt snapshot is skipped and left in place, a leftover
// temporary file stays, and writes fail with ErrReadOnly. A directory that cannot be listed
// makes Load report it and return ErrNoSnapshot (replay the whole log).
func TestReadOnlyStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snapshots")
	ro, err := snapshot.OpenStore(dir, snapshot.Options{ReadOnly: true})
	require.NoError(t, err)
	infos, err := ro.List(-1)
	require.NoError(t, err)
	require.Empty(t, infos)
	_, err = ro.Load(0, func(*snapshot.Snapshot) error { return nil })
	require.ErrorIs(t, err, snapshot.ErrNoSnapshot)
	require.NoDirExists(t, dir, "a read-only store does not create its directory")

	w, err := snapshot.OpenStore(dir, snapshot.Options{})
	require.NoError(t, err)
	good, err := w.Write(meta(0, 10), sampleState(1, 1, 1))
	require.NoError(t, err)
	bad, err := w.Write(meta(0, 20), sampleState(1, 1, 1))
	require.NoError(t, err)
	b, err := os.ReadFile(bad.Path)
	require.NoError(t, err)
	b[len(b)/2] ^= 1
	require.NoError(t, os.WriteFile(bad.Path, b, 0o644))
	tmp := filepath.Join(dir, snapshot.Name(0, 30)+".tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("partial"), 0o644))

	ro, err = snapshot.OpenStore(dir, snapshot.Options{ReadOnly: true})
	require.NoError(t, err)
	require.FileExists(t, tmp, "a read-only store leaves temporary files")
	loaded, err := ro.Load(0, func(sn *snapshot.Snapshot) error { var st state; return sn.Decode(&st) })
	require.NoError(t, err)
	require.Equal(t, good.Name, loaded.Used.Name)
	require.Len(t, loaded.Skipped, 1)
	require.Empty(t, loaded.Skipped[0].MovedTo)
	require.Contains(t, loaded.Messages()[0], "left in place (snapshot create moves it aside)")
	require.FileExists(t, bad.Path, "a read-only store moves nothing aside")
	_, err = ro.Write(meta(0, 40), sampleState(1, 1, 1))
	require.ErrorIs(t, err, snapshot.ErrReadOnly)
	_, err = ro.Prune(0, 1)
	require.ErrorIs(t, err, snapshot.ErrReadOnly)
	_, err = ro.SetAside(bad.Name)
	require.ErrorIs(t, err, snapshot.ErrReadOnly)

	// A file where the directory should be cannot be listed.
	notADir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notADir, nil, 0o644))
	_, err = snapshot.OpenStore(notADir, snapshot.Options{})
	require.Error(t, err, "a writable store needs its directory")
	ro, err = snapshot.OpenStore(notADir, snapshot.Options{ReadOnly: true})
	require.NoError(t, err)
	loaded, err = ro.Load(0, func(*snapshot.Snapshot) error { return nil })
	require.ErrorIs(t, err, snapshot.ErrNoSnapshot)
	require.ErrorIs(t, loaded.Unreadable, snapshot.ErrUnreadable)
	require.Contains(t, loaded.Messages()[0], "replaying from the start of the log")
	_, err = ro.List(-1)
	require.ErrorIs(t, err, snapshot.ErrUnreadable, "listing is what was asked for: an error")
}
