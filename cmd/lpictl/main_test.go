package main

import (
	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/sim/estimate"
)

// The types the tests decode predict's and sweep plot's output into, under
// the names they had in this package.
type (
	usageError     = configs.InputError // sweep_plot_test.go (another change's file)
	predictSummary = replay.Summary
	whatIfSummary  = estimate.WhatIfReport
)
