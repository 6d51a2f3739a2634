// Package jsondoc holds coordlog's JSON documents as Go types: what replay describe, offsets,
// groups, diff, check, restart and offsets restore print with --format json (and timeline
// with --format jsonl), each described by a JSON Schema in docs/json; a service serves the
// same types. Each document has a constructor from the results of the libraries below it
// (NewDescribe from a session.Replayed and a query.Description, NewOffsets, NewGroups,
// NewDiff, NewCheck from audit's findings, RestartOf, NewRestore) and is written with an
// Encoder.
//
// # Streaming
//
// A log may hold millions of groups and committed offsets; its describe or offsets document
// is larger than the state it comes from. The lists that grow with the log are Seq values:
// functions that produce the elements one at a time (a group converted, with its offsets read
// from the state, only when its turn comes). Encoder writes a document exactly as
// json.Encoder with two-space indentation does, but writes every Seq element by element, and
// the parts of the document that hold one field by field, so that no document is ever held
// whole; everything else goes through encoding/json. A Seq also marshals with encoding/json
// (as the array of its elements), so that small documents need no Encoder.
//
// # Rules every document keeps (docs/json/README.md)
//
//   - "schemaVersion" first, 1 today; a field added does not change it.
//   - Absent is null: an all-zero topic id is null, a field whose record the log does not have
//     yet is null; arrays are present, [] when empty, unless the schema marks them optional.
//   - Names beside ids: a topic id comes with the name the log gives it (TopicNames), or null.
//   - Each thing once: a group's id, type and state at the top of the group only.
//
// A field added to a document is added to its type here and to its schema in docs/json, whose
// test (cmd/replay TestJSONOutputsMatchSchemas) refuses any field the schema does not list.
package jsondoc
