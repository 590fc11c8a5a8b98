package main

import (
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/sim/estimate"
)

// The types the tests decode predict's and sweep plot's output into, under
// the names they had in this package.
type (
	predictSummary = replay.Summary
	whatIfSummary  = estimate.WhatIfReport
)
