package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMedian(t *testing.T) {
	odd := []float64{3, 1, 2}
	assert.Equal(t, 2.0, Median(odd))
	assert.Equal(t, []float64{3, 1, 2}, odd, "the input keeps its run order")
	assert.Equal(t, 2.5, Median([]float64{4, 1, 3, 2}))
	assert.Equal(t, 0.5, Median([]float64{0.5}))
}
