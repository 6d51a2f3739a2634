// Package report draws the history of a log's groups as one self-contained HTML page: the
// library under `replay report`. A rebalance storm, a member fenced again and again, an
// offset that jumps back are seen at a glance on a picture and found in minutes in text.
//
// # One source of truth
//
// The picture is drawn from the timeline's events (replay/explain) and from nothing else, so
// that the page and `replay timeline` never disagree: a Builder gives each partition's engine
// an observer that runs the timeline's Analyzer, turns its events into the picture model
// (events.go) and notes the records' types, so that every mark names the records behind it.
// What the page draws, per group:
//
//   - the group epoch (or a classic group's generation) steps, from the rebalance,
//     group-created and group-converted events;
//   - the rebalances, one span per rebalance-end event (each rebalance has exactly one), from
//     the record that started it to the one that completed it, coloured by outcome, with its
//     causes and moves (explain.SummaryText) as hover text and in a table;
//   - one lane per Member.Lane (a static member's instance id, so that its replacements
//     continue the lane), from member-joined to member-left or member-fenced, in the state
//     the reconcile steps give it: joined, stable, reconciling (waiting for partitions or
//     tasks others own), revoking, away (a static member at epoch -2);
//   - the target owner of each topic-partition or task (the rebalances' and
//     target-assignment events' moves) and its current owner (the reconcile events' owned
//     sets; a classic group's assignment is both);
//   - the committed offset of each topic-partition (offsets-committed changes and the offsets
//     a committed transaction made visible), rewinds in red, deletions as an end;
//   - each producer's transactions as spans from their first offset write to their commit or
//     abort marker, or open at the end of the log;
//   - the group's own marks (created, converted, deleted, violations) and the members' (joined,
//     left, fenced, replaced, changed, left temporarily).
//
// # The page
//
// Write renders a Page through html/template, which escapes every text from the log (group
// ids, client ids, hosts and topics are user input); control characters become visible
// escapes ("\x01") and bytes that are not UTF-8 U+FFFD, so that the page is well-formed XML
// whatever the log holds (the tests parse it so). The page has inline SVG and CSS, no script,
// no external reference and a Content-Security-Policy that forbids every fetch: it reads the
// same offline and attached to a ticket. Each mark has an SVG <title> (the browser shows it on
// hover) naming its record: partition, offset, time, record types and event kind; a click
// follows a fragment link to the event in the list under the group (a closed <details>,
// which the browser opens on the navigation), highlighted by CSS :target. Shapes carry
// data-mark and data-count attributes: what they stand for and how many (tests count them).
//
// # Scale
//
// A plot is 944 pixel columns wide. Spans narrower than two pixels (rebalances, member
// states, owners, transactions) and epoch steps are drawn together, one shape per two
// columns counting what it holds by kind; an offsets row with more than one commit per three
// columns is drawn as the range of each column (min to max) and its last value; an offsets
// chart has at most 300 hover texts shared by its rows (every rewind and deletion keeps its
// own); every block says what it aggregated. A group lists at most Options.MaxRows important
// events (marked, rebalances, members, conversions, deletions, aborted and open transactions)
// and MaxRoutineRows others, its rebalance table 300 rows; at most MaxGroups groups are
// drawn (those with findings, rebalances and events first), MaxLanes lanes and MaxItems
// assignment and offsets rows per group, each cut said on the page. Sections off screen are
// not laid out until scrolled to (content-visibility: auto). Memory: what the page draws,
// plus the timeline's model of the groups; events before a --since window update the state
// without being kept.
//
// # Invariants
//
//   - Unless the page says it cut them: every rebalance-end event of a drawn group is one
//     rebalance mark (data-count sums them), every Member.Lane one lane, every rewound
//     committed offset one rewind marker, every transaction-end and transaction-open one
//     transaction span.
//   - Every fragment link lands on an element of the page; nothing is fetched.
//   - Deterministic: the same log and options give the same bytes (no clock, no map order).
package report
