package config

import "github.com/llmprobe/llmprobe/config/workload"

// The scenario's schema moved to config/workload; these names keep the call
// sites building until they name it there.
type (
	Scenario      = workload.Scenario
	PromptDataset = workload.PromptDataset
	DatasetPrompt = workload.DatasetPrompt
	Distribution  = workload.Distribution
	Sampling      = workload.Sampling
	SLO           = workload.SLO
	Objective     = workload.Objective
	Quality       = workload.Quality
	Conversation  = workload.Conversation
)

const (
	ObjectiveTTFT       = workload.ObjectiveTTFT
	ObjectiveTPOT       = workload.ObjectiveTPOT
	ObjectiveE2E        = workload.ObjectiveE2E
	ObjectiveStall      = workload.ObjectiveStall
	ObjectiveTTFTAnswer = workload.ObjectiveTTFTAnswer
	DistFixed           = workload.DistFixed
	DistUniform         = workload.DistUniform
	DistLognormal       = workload.DistLognormal
	DistEmpirical       = workload.DistEmpirical
	DatasetShareGPT     = workload.DatasetShareGPT
	MaxTurns            = workload.MaxTurns
)

var DefaultScenario = workload.DefaultScenario
