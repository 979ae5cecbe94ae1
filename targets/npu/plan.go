package npu

import (
	"fmt"

	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// The NPU runtime executes the host function as a targets.HostPlan.
type (
	Plan     = targets.HostPlan
	PlanBuf  = targets.PlanBuf
	PlanCall = targets.PlanCall
)

// planOf is targets.PlanOf with the NPU's error prefix.
func planOf(h *tir.PrimFunc) (*Plan, error) {
	p, err := targets.PlanOf(h)
	if err != nil {
		return nil, fmt.Errorf("npu: %v", err)
	}
	return p, nil
}
