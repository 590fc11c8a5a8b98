// Package portview writes lpictl's text views of local ports and of
// emulated EEE ports (docs/model.md §1's port power states): the tables
// of `lpictl ports` and `lpictl emulate status`, what `lpictl emulate
// attach` attached or would change (--check), and what `lpictl emulate
// detach` removed. It only formats what hwlink reports.
package portview
