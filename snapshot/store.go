package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// File name suffixes.
const (
	suffix       = ".snap"
	tmpSuffix    = ".tmp"
	brokenSuffix = ".broken"
	namePrefix   = "snap-"
)

// Options configure a Store.
type Options struct {
	// Retain is how many snapshots per partition Write keeps, newest first; older ones are
	// deleted after the new one is durable. 0 keeps all. Quarantined (*.broken) files are
	// never deleted: they are evidence.
	Retain int
	// ReadOnly opens the store for reading only: the directory is neither created nor
	// cleaned, Load leaves a corrupt snapshot where it is (reported, not quarantined), and
	// Write, Prune and SetAside fail with ErrReadOnly. A missing directory is an empty store.
	// Readers use it, so that they work on read-only media and beside a writer.
	ReadOnly bool
}

// ErrReadOnly is wrapped by the error of a write to a store opened with Options.ReadOnly.
var ErrReadOnly = errors.New("snapshot: store opened read-only")

// ErrUnreadable is wrapped by the error of a store whose directory cannot be listed.
var ErrUnreadable = errors.New("snapshot: cannot read the snapshot directory")

// Store is a directory of snapshot files, one or more per partition. One process writes a
// store at a time (the Pebble log next to it holds the database lock); within a process the
// Store's methods are safe for concurrent use.
type Store struct {
	dir  string
	opts Options
	mu   sync.Mutex

	// testHook, when set, runs before each step of Write ("create", "write", "sync", "close",
	// "rename", "syncdir", "prune") and can fail it: crash tests inject failures with it. A
	// failed "write" writes half its buffer first, as a torn write would.
	testHook func(step string) error
}

// Info describes one snapshot file.
type Info struct {
	Name       string // file name within the store
	Path       string
	Partition  int32 // from the name
	NextOffset int64 // from the name
	Size       int64
	Header     Header // valid when Err is nil
	// Err is why the header could not be read (List only; Verify reads the whole file).
	Err error
}

// Name returns the file name of the snapshot of partition p at next offset next. Names sort
// by partition and then by offset.
func Name(p int32, next int64) string {
	return fmt.Sprintf("%s%010d-%020d%s", namePrefix, p, next, suffix)
}

// ParseName parses a name made by Name.
func ParseName(name string) (p int32, next int64, ok bool) {
	rest, found := strings.CutPrefix(name, namePrefix)
	if !found {
		return 0, 0, false
	}
	rest, found = strings.CutSuffix(rest, suffix)
	if !found || len(rest) != 10+1+20 || rest[10] != '-' {
		return 0, 0, false
	}
	pp, err1 := strconv.ParseInt(rest[:10], 10, 32)
	nn, err2 := strconv.ParseInt(rest[11:], 10, 64)
	if err1 != nil || err2 != nil || pp < 0 || nn < 0 {
		return 0, 0, false
	}
	return int32(pp), nn, true
}

// OpenStore opens (creating if needed) the snapshot store in dir. Temporary files left by a
// write that crashed are removed: by construction they were never a snapshot. With
// opts.ReadOnly it touches nothing and does not even read the directory (Load and List do).
func OpenStore(dir string, opts Options) (*Store, error) {
	if opts.ReadOnly {
		return &Store{dir: dir, opts: opts}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapshot: create store: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: open store: %w", err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), namePrefix) && strings.HasSuffix(e.Name(), tmpSuffix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("snapshot: remove stale temporary file: %w", err)
			}
		}
	}
	return &Store{dir: dir, opts: opts}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) hook(step string) error {
	if s.testHook == nil {
		return nil
	}
	return s.testHook(step)
}

// Write stores a snapshot of meta.Partition at meta.NextOffset, replacing one at the same
// offset. The write is atomic: the bytes go to a temporary file that is fsynced, renamed into
// place and the directory fsynced, so after a crash at any instant the previous snapshots are
// untouched and the new one is either whole or absent. Then, with Options.Retain > 0, the
// partition's older snapshots beyond the newest Retain are deleted.
func (s *Store) Write(meta Meta, payload any) (Info, error) {
	if meta.Partition < 0 || meta.NextOffset < 0 {
		return Info{}, fmt.Errorf("snapshot: write: negative partition %d or offset %d", meta.Partition, meta.NextOffset)
	}
	if s.opts.ReadOnly {
		return Info{}, fmt.Errorf("%w: write %s", ErrReadOnly, s.dir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := Name(meta.Partition, meta.NextOffset)
	path := filepath.Join(s.dir, name)
	tmp := path + tmpSuffix
	size, err := s.writeTemp(tmp, meta, payload)
	if err != nil {
		_ = os.Remove(tmp)
		if errors.Is(err, syscall.ENOSPC) {
			return Info{}, fmt.Errorf("snapshot: write %s: %w: free space on the filesystem of %s, then run the same command again (the older snapshots are untouched)", name, err, s.dir)
		}
		return Info{}, fmt.Errorf("snapshot: write %s: %w", name, err)
	}
	if err := s.hook("rename"); err != nil {
		_ = os.Remove(tmp)
		return Info{}, fmt.Errorf("snapshot: write %s: %w", name, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return Info{}, fmt.Errorf("snapshot: write %s: %w", name, err)
	}
	// The rename is durable only once the directory is synced; until then a crash may undo
	// it, which leaves the previous snapshots, as promised.
	if err := s.hook("syncdir"); err != nil {
		return Info{}, fmt.Errorf("snapshot: write %s: sync directory: %w", name, err)
	}
	if err := syncDir(s.dir); err != nil {
		return Info{}, fmt.Errorf("snapshot: write %s: sync directory: %w", name, err)
	}
	info := Info{Name: name, Path: path, Partition: meta.Partition, NextOffset: meta.NextOffset, Size: size}
	if s.opts.Retain > 0 {
		if err := s.hook("prune"); err != nil {
			return info, fmt.Errorf("snapshot: prune after writing %s: %w", name, err)
		}
		if _, err := s.prune(meta.Partition, s.opts.Retain); err != nil {
			return info, err
		}
	}
	return info, nil
}

func (s *Store) writeTemp(tmp string, meta Meta, payload any) (int64, error) {
	if err := s.hook("create"); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	var w io.Writer = f
	if s.testHook != nil {
		w = &hookWriter{f: f, hook: s.hook}
	}
	n, err := Encode(w, meta, payload)
	if err == nil {
		err = s.hook("sync")
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = s.hook("close")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

type hookWriter struct {
	f    *os.File
	hook func(string) error
}

func (h *hookWriter) Write(p []byte) (int, error) {
	if err := h.hook("write"); err != nil {
		n, _ := h.f.Write(p[:len(p)/2])
		return n, err
	}
	return h.f.Write(p)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// names returns the snapshot file names of partition p (all partitions when p < 0), newest
// first within a partition, partitions ascending. A read-only store whose directory does not
// exist is empty.
func (s *Store) names(p int32) ([]Info, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) && s.opts.ReadOnly {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrUnreadable, s.dir, err)
	}
	var out []Info
	for _, e := range ents {
		pp, next, ok := ParseName(e.Name())
		if !ok || e.IsDir() || (p >= 0 && pp != p) {
			continue
		}
		out = append(out, Info{Name: e.Name(), Path: filepath.Join(s.dir, e.Name()), Partition: pp, NextOffset: next})
	}
	slices.SortFunc(out, func(a, b Info) int {
		if a.Partition != b.Partition {
			return int(a.Partition) - int(b.Partition)
		}
		switch {
		case a.NextOffset > b.NextOffset:
			return -1
		case a.NextOffset < b.NextOffset:
			return 1
		}
		return 0
	})
	return out, nil
}

// List returns the snapshots of partition p, newest first, with their headers (a header that
// does not read sets Info.Err; List does not verify payloads). p < 0 lists every partition,
// partitions ascending.
func (s *Store) List(p int32) ([]Info, error) {
	infos, err := s.names(p)
	if err != nil {
		return nil, err
	}
	for i := range infos {
		infos[i].Header, infos[i].Size, infos[i].Err = readHeaderFile(infos[i])
	}
	return infos, nil
}

func readHeaderFile(in Info) (Header, int64, error) {
	f, err := os.Open(in.Path)
	if err != nil {
		return Header{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Header{}, 0, err
	}
	h, err := ReadHeader(f, st.Size())
	if err == nil {
		err = checkName(in, h)
	}
	return h, st.Size(), err
}

// checkName makes sure the file says what its name says: a file copied or renamed by hand
// must not be restored as another partition or offset.
func checkName(in Info, h Header) error {
	if h.Meta.Partition != in.Partition || h.Meta.NextOffset != in.NextOffset {
		return fmt.Errorf("%w: file holds partition %d offset %d, its name says partition %d offset %d",
			ErrCorrupt, h.Meta.Partition, h.Meta.NextOffset, in.Partition, in.NextOffset)
	}
	return nil
}

// Snapshot is an opened snapshot file whose header, meta and trailer were checked. Its
// checksum is matched either before Decode (Open, Read) or by Decode itself, in the pass
// that decodes the payload (the snapshots Load hands out): either way Decode returns a
// payload only from a file whose checksum matched.
type Snapshot struct {
	Info
	f *os.File
	// crc is the trailer's checksum, still to be matched by Decode when verified is false.
	crc      uint32
	verified bool
}

// Meta returns the snapshot's metadata.
func (sn *Snapshot) Meta() Meta { return sn.Header.Meta }

// Decode decodes the payload into into (a pointer to the type that was written). It fails
// with ErrCorrupt when the file's checksum does not match, even if the bytes decoded.
func (sn *Snapshot) Decode(into any) error {
	if sn.verified {
		return DecodePayload(sn.f, sn.Header, into)
	}
	return decodeVerifying(sn.f, sn.Header, sn.crc, into)
}

// Close closes a snapshot returned by Open (Load closes the ones it hands out itself).
func (sn *Snapshot) Close() error { return sn.f.Close() }

// open opens the snapshot file described by in and checks it: the whole file (its
// checksum) when verify is set, else its header, meta and trailer, leaving the checksum to
// Decode, which reads the file once instead of twice.
func open(in Info, verify bool) (*Snapshot, error) {
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	in.Size = st.Size()
	var h Header
	var crc uint32
	if verify {
		h, err = Verify(f, in.Size)
	} else {
		h, crc, err = readTrailer(f, in.Size)
	}
	if err == nil {
		err = checkName(in, h)
	}
	in.Header = h
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Snapshot{Info: in, f: f, crc: crc, verified: verify}, nil
}

// Verify reads and checks the whole snapshot file name (checksum, trailer, name), without
// decoding the payload.
func (s *Store) Verify(name string) (Info, error) {
	in, err := s.info(name)
	if err != nil {
		return in, err
	}
	sn, err := open(in, true)
	if err != nil {
		in.Err = err
		return in, err
	}
	sn.f.Close()
	return sn.Info, nil
}

// Read verifies the snapshot file name and decodes its payload into into. Unlike Load it
// neither falls back nor moves anything aside.
func (s *Store) Read(name string, into any) (Info, error) {
	in, err := s.info(name)
	if err != nil {
		return in, err
	}
	sn, err := open(in, true)
	if err != nil {
		return in, err
	}
	defer sn.f.Close()
	return sn.Info, sn.Decode(into)
}

// Open verifies the snapshot file name and returns it open, for a caller that picks the
// payload type from the meta (Snapshot.Meta) before decoding. Close it when done. Like Read
// it neither falls back nor moves anything aside.
func (s *Store) Open(name string) (*Snapshot, error) {
	in, err := s.info(name)
	if err != nil {
		return nil, err
	}
	return open(in, true)
}

func (s *Store) info(name string) (Info, error) {
	p, next, ok := ParseName(name)
	if !ok || filepath.Base(name) != name {
		return Info{Name: name}, fmt.Errorf("snapshot: %q is not a snapshot file name (want %s)", name, Name(0, 0))
	}
	return Info{Name: name, Path: filepath.Join(s.dir, name), Partition: p, NextOffset: next}, nil
}

// Skipped is a snapshot Load did not use.
type Skipped struct {
	Info
	Err error
	// MovedTo is the quarantine name when the file was corrupt and moved aside; empty when
	// it was left in place (a newer format, refused by the caller, or a read-only store).
	MovedTo string
}

func (sk Skipped) String() string {
	switch {
	case sk.MovedTo != "":
		return fmt.Sprintf("snapshot %s is unusable (%v): moved aside to %s", sk.Name, sk.Err, sk.MovedTo)
	case errors.Is(sk.Err, ErrCorrupt):
		return fmt.Sprintf("snapshot %s is unusable (%v): left in place (snapshot create moves it aside)", sk.Name, sk.Err)
	}
	return fmt.Sprintf("snapshot %s skipped (%v): left in place", sk.Name, sk.Err)
}

// Loaded is what Load did.
type Loaded struct {
	// Used is the snapshot that was loaded; nil when none was usable.
	Used *Info
	// Skipped are the newer snapshots that were tried and not used, newest first.
	Skipped []Skipped
	// Unreadable is why the store's directory could not be listed (nil when it could): Load
	// then returns ErrNoSnapshot, so that the caller replays the whole log.
	Unreadable error
}

// Messages describes, one line each, every snapshot skipped and what was used.
func (l Loaded) Messages() []string {
	var out []string
	if l.Unreadable != nil {
		out = append(out, fmt.Sprintf("warning: %v: no snapshot can be used, replaying from the start of the log", l.Unreadable))
	}
	for _, sk := range l.Skipped {
		out = append(out, sk.String())
	}
	switch {
	case l.Used != nil && len(l.Skipped) > 0:
		out = append(out, fmt.Sprintf("using older snapshot %s (offset %d)", l.Used.Name, l.Used.NextOffset))
	case l.Used == nil && len(l.Skipped) > 0:
		out = append(out, "no valid snapshot left: replaying from the start of the log")
	}
	return out
}

// Load finds the newest usable snapshot of partition p. Snapshots are tried newest first;
// use is called with each whose header, meta and trailer check, and its Decode matches the
// checksum of the whole file in the same pass that decodes the payload (so use must
// return Decode's error: a mismatch is ErrCorrupt). A corrupt or truncated file is renamed
// to <name>.broken (never deleted; a read-only store leaves it in place) and the next older
// one tried; a file of a newer format, or one use refuses with an error that is not
// ErrCorrupt, is left in place and skipped. The Loaded result says what was skipped and why.
// When nothing is usable, or the directory cannot be listed (Loaded.Unreadable), Load returns
// ErrNoSnapshot: replay the whole log.
func (s *Store) Load(p int32, use func(*Snapshot) error) (Loaded, error) {
	var l Loaded
	if p < 0 {
		return l, fmt.Errorf("snapshot: load: negative partition %d", p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	infos, err := s.names(p)
	if errors.Is(err, ErrUnreadable) {
		l.Unreadable = err
		return l, ErrNoSnapshot
	}
	if err != nil {
		return l, err
	}
	for _, in := range infos {
		sn, err := open(in, false)
		if err == nil {
			err = use(sn)
			sn.f.Close()
			if err == nil {
				used := sn.Info
				l.Used = &used
				return l, nil
			}
			in = sn.Info
		}
		sk := Skipped{Info: in, Err: err}
		if errors.Is(err, ErrCorrupt) && !s.opts.ReadOnly {
			moved, qerr := s.quarantine(in.Name)
			if qerr != nil {
				return l, fmt.Errorf("snapshot: %s is corrupt (%v) and could not be moved aside: %w", in.Name, err, qerr)
			}
			sk.MovedTo = moved
		} else if errors.Is(err, fs.ErrNotExist) {
			continue // removed under us (pruned by another handle): not worth a message
		}
		l.Skipped = append(l.Skipped, sk)
	}
	return l, ErrNoSnapshot
}

// SetAside moves a snapshot that proved corrupt after Load used it (a damage only the
// caller's later checks could see) aside like Load does, and returns the new name.
func (s *Store) SetAside(name string) (string, error) {
	if _, err := s.info(name); err != nil {
		return "", err
	}
	if s.opts.ReadOnly {
		return "", fmt.Errorf("%w: set aside %s", ErrReadOnly, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.quarantine(name)
}

// quarantine renames name to name.broken (name.broken.N if that exists) and syncs the
// directory, so that the next Load does not try it again.
func (s *Store) quarantine(name string) (string, error) {
	dst := name + brokenSuffix
	for i := 1; ; i++ {
		if _, err := os.Lstat(filepath.Join(s.dir, dst)); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = fmt.Sprintf("%s%s.%d", name, brokenSuffix, i)
	}
	if err := os.Rename(filepath.Join(s.dir, name), filepath.Join(s.dir, dst)); err != nil {
		return "", err
	}
	return dst, syncDir(s.dir)
}

// Broken lists the quarantined files (*.broken, *.broken.N), sorted by name.
func (s *Store) Broken() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) && s.opts.ReadOnly {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrUnreadable, s.dir, err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), namePrefix) && strings.Contains(e.Name(), suffix+brokenSuffix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Prune deletes the snapshots of partition p beyond the newest keep, and returns their
// names. Quarantined files are not touched.
func (s *Store) Prune(p int32, keep int) ([]string, error) {
	if s.opts.ReadOnly {
		return nil, fmt.Errorf("%w: prune %s", ErrReadOnly, s.dir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prune(p, keep)
}

func (s *Store) prune(p int32, keep int) ([]string, error) {
	if keep < 1 {
		return nil, fmt.Errorf("snapshot: prune: keep %d, want at least 1", keep)
	}
	infos, err := s.names(p)
	if err != nil {
		return nil, err
	}
	if len(infos) <= keep {
		return nil, nil
	}
	var removed []string
	for _, in := range infos[keep:] {
		if err := os.Remove(in.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("snapshot: prune: %w", err)
		}
		removed = append(removed, in.Name)
	}
	return removed, syncDir(s.dir)
}
