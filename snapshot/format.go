package snapshot

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// FormatVersion is the version of the file format this package writes. Readers accept every
// version from 1 up to FormatVersion; see doc.go for what each one is.
const FormatVersion uint32 = 2

const (
	magic        = "CLOGSNAP"
	trailerMagic = "SNPE"
	headerSize   = 8 + 4 + 4 + 4 + 4 // magic, version, flags, meta length, meta CRC
	trailerSize  = 8 + 4 + 4         // payload length, file CRC, trailer magic
	// maxMetaSize bounds the meta section so that a corrupt length cannot make a reader
	// allocate gigabytes: a Meta is a few hundred bytes.
	maxMetaSize = 1 << 20
	bufSize     = 1 << 20
)

// castagnoli is CRC-32C: hardware accelerated on amd64 and arm64, so checksumming runs at
// several GB/s and is never the bottleneck of a snapshot write or verify.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors. Match with errors.Is.
var (
	// ErrCorrupt means the file's bytes are damaged: bad magic, a checksum mismatch, a
	// truncated file, lengths that do not add up, or a payload that does not decode although
	// its checksum matched. A corrupt snapshot is moved aside (*.broken) by the Store.
	ErrCorrupt = errors.New("snapshot: corrupt")
	// ErrUnsupportedVersion means the file was written by a newer format version. The file is
	// intact as far as this reader knows and is left in place.
	ErrUnsupportedVersion = errors.New("snapshot: unsupported format version")
	// ErrPayloadType means the payload type cannot be encoded deterministically (it contains a
	// map, an interface, a channel or a function).
	ErrPayloadType = errors.New("snapshot: payload type not deterministic")
	// ErrNoSnapshot means no valid snapshot exists for the partition: replay from the start.
	ErrNoSnapshot = errors.New("snapshot: no valid snapshot")
)

// Meta describes a snapshot. It is stored in the header, with its own checksum, so that List
// can show it without reading the payload.
type Meta struct {
	// Partition is the __consumer_offsets partition the state belongs to.
	Partition int32
	// NextOffset is the offset replay continues from: every record below it is in the state.
	NextOffset int64
	// KafkaVersion names the replay rules the state was built with ("4.4"). A state replayed
	// with other rules is a different state, so a reader compares it with its own.
	KafkaVersion string
	// RecordLayout names the record layout the state was decoded with ("" = the version's
	// default).
	RecordLayout string
	// PayloadKind names the payload's type and its version ("replay/v2"); readers refuse a
	// kind they do not know.
	PayloadKind string
	// CreatedAtUnixMilli is when the snapshot was taken, supplied by the caller; 0 means not
	// recorded. Leave it 0 where identical states must give identical files.
	CreatedAtUnixMilli int64
	// Counters are named figures for display (records replayed, batches, ...), in the order
	// given.
	Counters []Counter
	// Log identifies the log the state was replayed from (format 2; empty in format 1 files):
	// a few of its batches, by offset and checksum, which a reader compares with the log it is
	// about to continue, so that a snapshot is never restored on another log. The caller
	// chooses the batches (replay/recovery: the first one and the last one replayed).
	Log []LogMark `msgpack:",omitempty"`
}

// LogMark identifies one batch of a log: the batch a read of the log from Offset starts with
// (the batch holding Offset, or the first one after it), by its offsets and its CRC as stored
// (Kafka's batch CRC, which covers the batch's records).
type LogMark struct {
	Offset     int64
	BaseOffset int64
	LastOffset int64
	CRC        uint32
}

// Counter is a named figure in Meta.
type Counter struct {
	Name  string
	Value int64
}

// Counter returns the value of the counter named name and whether it is present.
func (m Meta) Counter(name string) (int64, bool) {
	for _, c := range m.Counters {
		if c.Name == name {
			return c.Value, true
		}
	}
	return 0, false
}

// Header is what a reader learns from a file before reading its payload.
type Header struct {
	Format     uint32 // the file's format version
	Meta       Meta
	MetaEnd    int64 // byte position where the payload starts
	PayloadLen int64 // from the file size (verified against the trailer by Verify)
	Size       int64 // file size
}

// newEncoder returns the msgpack encoder every snapshot uses. Its options are part of the
// format: structs as maps keyed by field name (a field added to the payload type later reads
// as its zero value from older snapshots instead of breaking them; arrays would tie every
// snapshot to one exact field list), integers at their Go width (no value-dependent choices).
// Maps are sorted too, but payload types may not contain maps at all (checkPayloadType):
// msgpack only sorts map[string]string/bool/interface{}, everything else would leak Go's
// random map order into the bytes.
func newEncoder(w io.Writer) *msgpack.Encoder {
	enc := msgpack.NewEncoder(w)
	enc.SetSortMapKeys(true)
	return enc
}

// Encode writes a complete snapshot file (header, meta, payload, trailer) to w and returns the
// number of bytes written. The bytes are a pure function of meta and payload.
func Encode(w io.Writer, meta Meta, payload any) (int64, error) {
	if err := checkPayloadType(reflect.TypeOf(payload)); err != nil {
		return 0, err
	}
	var mb []byte
	{
		var buf bytesBuffer
		if err := newEncoder(&buf).Encode(&meta); err != nil {
			return 0, fmt.Errorf("snapshot: encode meta: %w", err)
		}
		mb = buf.b
	}
	if len(mb) > maxMetaSize {
		return 0, fmt.Errorf("snapshot: meta is %d bytes, more than %d", len(mb), maxMetaSize)
	}
	cw := &crcWriter{w: w}
	hdr := make([]byte, headerSize, headerSize+len(mb))
	copy(hdr, magic)
	binary.BigEndian.PutUint32(hdr[8:], FormatVersion)
	binary.BigEndian.PutUint32(hdr[12:], 0) // flags: none defined
	binary.BigEndian.PutUint32(hdr[16:], uint32(len(mb)))
	binary.BigEndian.PutUint32(hdr[20:], crc32.Checksum(mb, castagnoli))
	hdr = append(hdr, mb...)
	if _, err := cw.Write(hdr); err != nil {
		return cw.n, err
	}
	bw := bufio.NewWriterSize(cw, bufSize)
	if err := newEncoder(bw).Encode(payload); err != nil {
		if cw.err != nil {
			return cw.n, cw.err
		}
		return cw.n, fmt.Errorf("snapshot: encode payload: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return cw.n, err
	}
	payloadLen := cw.n - int64(len(hdr))
	var tr [trailerSize]byte
	binary.BigEndian.PutUint64(tr[0:], uint64(payloadLen))
	binary.BigEndian.PutUint32(tr[8:], cw.crc)
	copy(tr[12:], trailerMagic)
	n, err := w.Write(tr[:])
	return cw.n + int64(n), err
}

// ReadHeader reads and checks the header and meta of a snapshot of the given size. It does not
// read the payload; Verify does.
func ReadHeader(r io.ReaderAt, size int64) (Header, error) {
	h := Header{Size: size}
	if size < headerSize+trailerSize {
		return h, fmt.Errorf("%w: %d bytes, shorter than header and trailer (truncated?)", ErrCorrupt, size)
	}
	var hdr [headerSize]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return h, fmt.Errorf("%w: read header: %v", ErrCorrupt, err)
	}
	if string(hdr[:8]) != magic {
		return h, fmt.Errorf("%w: bad magic %q (not a coordlog snapshot)", ErrCorrupt, hdr[:8])
	}
	h.Format = binary.BigEndian.Uint32(hdr[8:])
	if h.Format == 0 || h.Format > FormatVersion {
		return h, fmt.Errorf("%w %d (this reader knows 1 to %d)", ErrUnsupportedVersion, h.Format, FormatVersion)
	}
	if flags := binary.BigEndian.Uint32(hdr[12:]); flags != 0 {
		return h, fmt.Errorf("%w: unknown flags %#x", ErrCorrupt, flags)
	}
	metaLen := int64(binary.BigEndian.Uint32(hdr[16:]))
	if metaLen > maxMetaSize || headerSize+metaLen+trailerSize > size {
		return h, fmt.Errorf("%w: meta length %d does not fit a %d-byte file (truncated?)", ErrCorrupt, metaLen, size)
	}
	mb := make([]byte, metaLen)
	if _, err := r.ReadAt(mb, headerSize); err != nil {
		return h, fmt.Errorf("%w: read meta: %v", ErrCorrupt, err)
	}
	if got, want := crc32.Checksum(mb, castagnoli), binary.BigEndian.Uint32(hdr[20:]); got != want {
		return h, fmt.Errorf("%w: meta checksum %08x, header says %08x", ErrCorrupt, got, want)
	}
	if err := msgpack.Unmarshal(mb, &h.Meta); err != nil {
		return h, fmt.Errorf("%w: decode meta: %v", ErrCorrupt, err)
	}
	h.MetaEnd = headerSize + metaLen
	h.PayloadLen = size - trailerSize - h.MetaEnd
	return h, nil
}

// Verify reads the whole file and checks its trailer and checksum. It reads in bounded
// memory and never decodes the payload, so damaged lengths inside it cannot cause large
// allocations.
func Verify(r io.ReaderAt, size int64) (Header, error) {
	h, want, err := readTrailer(r, size)
	if err != nil {
		return h, err
	}
	crc := uint32(0)
	buf := make([]byte, bufSize)
	for pos, end := int64(0), size-trailerSize; pos < end; {
		n := int64(len(buf))
		if end-pos < n {
			n = end - pos
		}
		if _, err := r.ReadAt(buf[:n], pos); err != nil {
			return h, fmt.Errorf("%w: read at %d: %v", ErrCorrupt, pos, err)
		}
		crc = crc32.Update(crc, castagnoli, buf[:n])
		pos += n
	}
	if crc != want {
		return h, fmt.Errorf("%w: checksum %08x, trailer says %08x", ErrCorrupt, crc, want)
	}
	return h, nil
}

// readTrailer reads the header and checks the trailer (magic and payload length), and
// returns the checksum the trailer holds: everything but the checksum itself.
func readTrailer(r io.ReaderAt, size int64) (Header, uint32, error) {
	h, err := ReadHeader(r, size)
	if err != nil {
		return h, 0, err
	}
	var tr [trailerSize]byte
	if _, err := r.ReadAt(tr[:], size-trailerSize); err != nil {
		return h, 0, fmt.Errorf("%w: read trailer: %v", ErrCorrupt, err)
	}
	if string(tr[12:]) != trailerMagic {
		return h, 0, fmt.Errorf("%w: no trailer at the end of the %d-byte file (truncated or partly written)", ErrCorrupt, size)
	}
	if pl := int64(binary.BigEndian.Uint64(tr[0:])); pl != h.PayloadLen {
		return h, 0, fmt.Errorf("%w: trailer says %d payload bytes, the file holds %d (truncated or extended)", ErrCorrupt, pl, h.PayloadLen)
	}
	return h, binary.BigEndian.Uint32(tr[8:]), nil
}

// decodeVerifying decodes the payload of a file whose header and trailer were checked
// (readTrailer gave want) and matches the checksum in the same sequential pass: every byte
// the decoder reads is checksummed on its way in, and the payload is used only when the
// whole file matched. On a mismatch the error is the checksum's (ErrCorrupt), whatever the
// decoder made of the damaged bytes: the rest of the file is read to tell.
func decodeVerifying(r io.ReaderAt, h Header, want uint32, into any) error {
	if err := checkPayloadType(reflect.TypeOf(into)); err != nil {
		return err
	}
	head := make([]byte, h.MetaEnd)
	if _, err := r.ReadAt(head, 0); err != nil {
		return fmt.Errorf("%w: read header: %v", ErrCorrupt, err)
	}
	cr := &crcReader{r: io.NewSectionReader(r, h.MetaEnd, h.PayloadLen), crc: crc32.Checksum(head, castagnoli)}
	derr := decodeFrom(cr, h.PayloadLen, into)
	if derr != nil {
		// Finish the checksum: a damaged file says so rather than how its bytes decoded.
		if _, err := io.Copy(io.Discard, cr); err != nil {
			return fmt.Errorf("%w: read payload: %v", ErrCorrupt, err)
		}
	}
	if cr.crc != want {
		return fmt.Errorf("%w: checksum %08x, trailer says %08x", ErrCorrupt, cr.crc, want)
	}
	return derr
}

// crcReader checksums what it reads.
type crcReader struct {
	r   io.Reader
	crc uint32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	return n, err
}

// DecodePayload decodes the payload of a file whose header is h into into (a pointer). Call
// Verify first: DecodePayload trusts the bytes. It fails with ErrCorrupt when the payload
// does not decode into into's type or does not end exactly at the trailer.
func DecodePayload(r io.ReaderAt, h Header, into any) error {
	if err := checkPayloadType(reflect.TypeOf(into)); err != nil {
		return err
	}
	return decodeFrom(io.NewSectionReader(r, h.MetaEnd, h.PayloadLen), h.PayloadLen, into)
}

// decodeFrom decodes a payload of n bytes read from pr into into; it fails with ErrCorrupt
// when the payload does not decode into into's type or does not end exactly after n bytes.
func decodeFrom(pr io.Reader, n int64, into any) error {
	lr := &io.LimitedReader{R: pr, N: n}
	br := bufio.NewReaderSize(lr, bufSize)
	dec := msgpack.NewDecoder(br)
	// Unmarshalers bound their preallocations by the bytes left (Decoder.Prealloc).
	remaining.Store(dec, func() int64 { return lr.N + int64(br.Buffered()) })
	defer remaining.Delete(dec)
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("%w: decode payload: %v", ErrCorrupt, err)
	}
	if left := lr.N + int64(br.Buffered()); left != 0 {
		return fmt.Errorf("%w: %d bytes after the payload", ErrCorrupt, left)
	}
	return nil
}

// Decode verifies a whole snapshot file and decodes its payload into into.
func Decode(r io.ReaderAt, size int64, into any) (Header, error) {
	h, err := Verify(r, size)
	if err != nil {
		return h, err
	}
	return h, DecodePayload(r, h, into)
}

// crcWriter checksums what it passes on and remembers the first error, so that Encode can
// tell a failing file from a failing encoder.
type crcWriter struct {
	w   io.Writer
	crc uint32
	n   int64
	err error
}

func (c *crcWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	c.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	c.err = err
	return n, err
}

type bytesBuffer struct{ b []byte }

func (b *bytesBuffer) Write(p []byte) (int, error) { b.b = append(b.b, p...); return len(p), nil }

// checkPayloadType rejects payload types whose encoding could depend on anything but their
// value: maps (iteration order), interfaces (the dynamic type decides, and may be a map),
// channels, functions. Results are cached per type: the walk runs once per process.
func checkPayloadType(t reflect.Type) error {
	if t == nil {
		return fmt.Errorf("%w: nil payload", ErrPayloadType)
	}
	if v, ok := checkedTypes.Load(t); ok {
		if v == nil {
			return nil
		}
		return v.(error)
	}
	err := walkType(t, t.String(), map[reflect.Type]bool{})
	if err != nil {
		checkedTypes.Store(t, err)
	} else {
		checkedTypes.Store(t, nil)
	}
	return err
}

var checkedTypes sync.Map // reflect.Type -> error or nil

func walkType(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil // recursive types are fine: the value is finite
	}
	seen[t] = true
	if handled, err := registerCodecs(t); handled || err != nil {
		return err
	}
	switch t.Kind() {
	case reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Uintptr, reflect.Complex64, reflect.Complex128:
		return fmt.Errorf("%w: %s is a %s", ErrPayloadType, path, t.Kind())
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return walkType(t.Elem(), path+"[]", seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue // msgpack skips unexported fields
			}
			if f.Tag.Get("msgpack") == "-" {
				continue
			}
			if err := walkType(f.Type, path+"."+f.Name, seen); err != nil {
				return err
			}
		}
	}
	return nil
}
