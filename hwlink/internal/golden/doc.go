// Package golden compares encoded netlink messages with hex golden files
// under a test's testdata/ (rewritten with -update). It is for the tests of
// hwlink's packages (eeectl, observe) only.
package golden
