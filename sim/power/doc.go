// Package power holds the port power model of docs/model.md §1 and §3.3: power
// presets (the papers' EEE state powers and transition times, read from
// configs/presets), the low-power modes a run can select, and the system
// power figures (switches, nodes) used for energy accounting.
package power
