// Package syntax is the text-syntax core shared by Tessera's two IR text
// forms, graphir (MLIR syntax for the graph and hlo dialects) and
// tensorir (the loop-nest IR):
//
//   - Location and the MLIR-style Diagnostic ("file:line:col: error:
//     message", then "file:line:col: note: ..." lines), so that both
//     levels report errors as one type;
//   - the hand-written lexer core (Scanner): position tracking,
//     whitespace and // comments, string literals, numbers, identifiers,
//     %names and @symbols, on which each level builds its own tokens;
//   - the grammar both levels share: locations (Loc: loc("file":line:col),
//     loc("file"), loc(unknown)), attribute dictionaries and their entries
//     (Dict, NamedAttr), and running a participle parser into located
//     Diagnostics (Parse);
//   - MLIR string literals (Quote, Unquote), bare identifiers and float
//     spelling for the printers.
//
// It imports only the standard library and participle.
package syntax
