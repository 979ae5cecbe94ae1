// Command-line errors name the problem and exit 1 (`not` checks the status).
// RUN: not tessera-opt %s --pass-pipeline='cse,no-such-pass' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tessera-opt %s --pass-pipeline='cse(dce' 2>&1 | FileCheck %s --check-prefix=UNBALANCED
// RUN: not tessera-opt %s --constant-fold='no-such-option=1' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not tessera-opt %s --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not tessera-opt %s %s 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not tessera-opt %S/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// Input from stdin is named <stdin> in diagnostics; -o writes a file.
// RUN: tessera-opt < %s -o %t && FileCheck %s --check-prefix=OUT < %t
// RUN: echo 'func.func @f( {' | not tessera-opt - 2>&1 | FileCheck %s --check-prefix=STDIN
// --help lists the registered passes with their summaries.
// RUN: tessera-opt --help | FileCheck %s --check-prefix=HELP

// UNKNOWN: tessera-opt: invalid pass pipeline: unknown pass 'no-such-pass' in pipeline (known: {{.*}}canonicalize
// UNBALANCED: tessera-opt: invalid pass pipeline: unbalanced
// OPTION: tessera-opt: invalid pass pipeline: pass 'constant-fold' has no option 'no-such-option'
// FLAG: tessera-opt: unknown flag: --no-such-flag
// TWO: tessera-opt: expected at most one input file, got 2
// MISSING: tessera-opt: could not open input file: {{.*}}does-not-exist.mlir
// OUT: func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32>
// STDIN: <stdin>:1:{{[0-9]+}}: error:

// HELP: Usage: tessera-opt [flags] [file|-] [flags]
// HELP: --pass-pipeline
// HELP: --split-input-file
// HELP: --verify-diagnostics
// HELP: Steps
// HELP-DAG: --canonicalize {{.+}}
// HELP-DAG: --cse {{.+}}
// HELP-DAG: --dce {{.+}}
// HELP-DAG: --constant-fold {{.+}}
// HELP-DAG: option max-elements:
// HELP-DAG: --fold-batch-norm {{.+}}
// HELP-DAG: --legalize-to-hlo {{.+}}
// HELP-DAG: --fuse {{.+}}
// HELP-DAG: --lower-to-tir {{.+}} (graph or hlo IR → tensor IR)
// HELP-DAG: --inline-elementwise {{.+}} (tensor IR)
// HELP-DAG: --default-schedule {{.+}}
// HELP-DAG: option mcpu:
// HELP-DAG: --apply-tuning-records {{.+}}
// HELP-DAG: --apply-trace FILE {{.+}}
// HELP-DAG: --rewrite-layout {{.+}}
// HELP-DAG: --compact-buffer-allocation {{.+}}
// HELP-DAG: --codegen {{.+}} (tensor IR → compiled code)

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
