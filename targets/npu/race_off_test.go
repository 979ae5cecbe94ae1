//go:build !race

package npu

// raceDetector reports a build with the race detector, which slows the
// tensor-IR emitter's element-by-element checks several times over: the
// LeNet-5 convolutions' check skips under it.
const raceDetector = false
