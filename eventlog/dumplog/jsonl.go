package dumplog

import (
	"errors"
	"io"
	"strconv"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
)

func isTrailing(err error) bool {
	var te *recordcodec.TrailingBytesError
	return errors.As(err, &te)
}

func isUnknownType(err error) bool {
	var ue *recordcodec.UnknownTypeError
	return errors.As(err, &ue)
}

// JSONLPrinter writes one JSON object per record:
//
//	{"partition":P,"offset":O,"timestamp":T,
//	 "batch":{"baseOffset":..,"lastOffset":..,"producerId":..,"producerEpoch":..,
//	          "partitionLeaderEpoch":..,"transactional":..,"control":..,"magic":..,
//	          "codec":"none","timestampType":"CreateTime","deleteHorizonMs":null|N,
//	          "file":"..","position":N},
//	 "key":{"type":N,"data":{..}} | null,
//	 "value":{"version":N,"data":{..}} | null,
//	 "tombstone":bool,
//	 "control":{"type":"COMMIT","coordinatorEpoch":N} (control records only),
//	 "error":"..." (records that do not decode; key and value are then null)}
//
// Type and version are numbers; member bytes of consumer-protocol classic groups are parsed as
// in the dump-log text.
type JSONLPrinter struct {
	W    io.Writer
	line []byte
}

// Batch prints the given entries of b.
func (p *JSONLPrinter) Batch(b *eventlog.Batch, entries []Entry) error { return p.Records(b, entries) }

// BatchHeader prints nothing: every line carries its batch.
func (p *JSONLPrinter) BatchHeader(*eventlog.Batch) error { return nil }

// Records prints the given entries of b.
func (p *JSONLPrinter) Records(b *eventlog.Batch, entries []Entry) error {
	l := p.line[:0]
	for i := range entries {
		l = appendJSONL(l, b, &entries[i])
	}
	p.line = l
	_, err := p.W.Write(l)
	return err
}

func appendJSONString(l []byte, s string) []byte { return recordcodec.AppendJSONString(l, s) }

func appendJSONL(l []byte, b *eventlog.Batch, e *Entry) []byte {
	r := e.Record
	l = append(l, `{"partition":`...)
	l = strconv.AppendInt(l, int64(b.Partition), 10)
	l = append(l, `,"offset":`...)
	l = strconv.AppendInt(l, r.Offset, 10)
	l = append(l, `,"timestamp":`...)
	l = strconv.AppendInt(l, b.RecordTimestamp(r), 10)
	l = append(l, `,"batch":{"baseOffset":`...)
	l = strconv.AppendInt(l, b.BaseOffset, 10)
	l = append(l, `,"lastOffset":`...)
	l = strconv.AppendInt(l, b.LastOffset, 10)
	l = append(l, `,"producerId":`...)
	l = strconv.AppendInt(l, b.ProducerID, 10)
	l = append(l, `,"producerEpoch":`...)
	l = strconv.AppendInt(l, int64(b.ProducerEpoch), 10)
	l = append(l, `,"partitionLeaderEpoch":`...)
	l = strconv.AppendInt(l, int64(b.PartitionLeaderEpoch), 10)
	l = append(l, `,"transactional":`...)
	l = strconv.AppendBool(l, b.Attributes.Transactional())
	l = append(l, `,"control":`...)
	l = strconv.AppendBool(l, b.Attributes.Control())
	l = append(l, `,"magic":`...)
	l = strconv.AppendInt(l, int64(b.Magic), 10)
	l = append(l, `,"codec":"`...)
	l = append(l, b.Attributes.Codec().String()...)
	l = append(l, `","timestampType":"`...)
	l = append(l, timestampLabel(b)...)
	l = append(l, `","deleteHorizonMs":`...)
	if h, ok := b.DeleteHorizon(); ok {
		l = strconv.AppendInt(l, h, 10)
	} else {
		l = append(l, "null"...)
	}
	l = append(l, `,"file":`...)
	l = appendJSONString(l, b.Origin.File)
	l = append(l, `,"position":`...)
	l = strconv.AppendInt(l, b.Origin.Pos, 10)
	l = append(l, '}')
	if b.Attributes.Control() {
		l = append(l, `,"key":null,"value":null,"tombstone":false,"control":`...)
		if e.ControlErr != nil {
			l = append(l, `null,"error":`...)
			l = appendJSONString(l, e.ControlErr.Error())
		} else {
			l = append(l, `{"type":"`...)
			l = append(l, e.Control.Type.String()...)
			l = append(l, `","coordinatorEpoch":`...)
			l = strconv.AppendInt(l, int64(e.Marker.CoordinatorEpoch), 10)
			l = append(l, '}')
		}
		return append(l, "}\n"...)
	}
	if e.Err != nil && !isTrailing(e.Err) {
		l = append(l, `,"key":null,"value":null,"tombstone":`...)
		l = strconv.AppendBool(l, r.Value == nil)
		l = append(l, `,"error":`...)
		l = appendJSONString(l, e.Err.Error())
		return append(l, "}\n"...)
	}
	l = append(l, `,"key":{"type":`...)
	l = strconv.AppendInt(l, int64(e.Decoded.Key.Type), 10)
	l = append(l, `,"data":`...)
	l = recordcodec.AppendKeyDataJSON(l, e.Decoded.Key)
	l = append(l, `},"value":`...)
	if e.Decoded.Value == nil {
		l = append(l, "null"...)
	} else {
		l = append(l, `{"version":`...)
		l = strconv.AppendInt(l, int64(e.Decoded.Value.ValueVersion()), 10)
		l = append(l, `,"data":`...)
		l = recordcodec.AppendValueDataJSON(l, e.Decoded.Value, true)
		l = append(l, '}')
	}
	l = append(l, `,"tombstone":`...)
	l = strconv.AppendBool(l, e.Decoded.Value == nil)
	if e.Err != nil {
		l = append(l, `,"warning":`...)
		l = appendJSONString(l, e.Err.Error())
	}
	return append(l, "}\n"...)
}
