// Package termtext lays out the commands' text for a reader at a terminal of a given width
// (0: no limit): tables (Table), whose layout is the first that fits of one line per row,
// wrapped cells, detail lines and one field per line; line wrapping that breaks where a
// reader expects it (Wrap: between fields, at words, after list separators); a writer that
// wraps prose passing through it (FitWriter); and indented paragraphs (WriteWrapped).
//
// What to print is the commands'; how it fits is this package's, in one place, so that every
// command's output reads the same at 80 and 120 columns. It reads no terminal: the width is
// the caller's.
//
// # Invariants
//
//   - Width 0 changes nothing: every row on one line, every line as written.
//   - A table written in several blocks keeps the layout its first block chose, so that
//     millions of rows print in bounded memory and still line up.
//   - Widths count runes; cells must not hold tabs or line breaks.
package termtext
