//go:build race

package graph_test

// raceDetector reports a build with the race detector, which slows the
// interpreter several times over: the ResNet-18 check skips under it.
const raceDetector = true
